#!/usr/bin/env bash
# Installs what badge needs to build and run on Debian/Ubuntu, and nothing
# that is already there. Safe to run again; quiet when all is present.
set -euo pipefail

# libraqm shapes captions in Arabic, Hebrew, Devanagari, CJK...; the Noto fonts draw them.
# fonts-material-design-icons-iconfont: Google's Material Icons, the procedural backend's icon motifs.
# ca-certificates: the system's CAs, which https backends verify servers against.
# libicu-dev: ICU's line breaking, where a Chinese, Japanese or Korean caption may be cut.
packages=(libgd-dev libcurl4-openssl-dev libssl-dev libjpeg62-turbo-dev libfreetype-dev libfontconfig-dev libraqm-dev libicu-dev libchafa-dev fonts-dejavu-core
  fonts-noto-core fonts-noto-cjk fonts-material-design-icons-iconfont fontconfig pkg-config zlib1g-dev libdeflate-dev ca-certificates)
# Flags add package sets; several may be given.
for flag in "$@"; do
  case "$flag" in
    --with-bench) packages+=(python3-pil curl time libvips-tools imagemagick wrk nginx) ;;
    # The card page is tested in a real browser, and the example exec
    # plugins draw with Pillow and ImageMagick, tesseract reads captions back in each script, and tmux
    # gives --choose a real terminal; fuse (fusermount, libfuse2) mounts the file system that fails
    # fsyncs for the store's fault tests: only the tests need them.
    --with-tests) packages+=(chromium python3-pil imagemagick tmux tesseract-ocr tesseract-ocr-eng tesseract-ocr-spa tesseract-ocr-fra
                             tesseract-ocr-deu tesseract-ocr-ita tesseract-ocr-por tesseract-ocr-nld tesseract-ocr-chi-sim tesseract-ocr-jpn
                             tesseract-ocr-kor tesseract-ocr-rus tesseract-ocr-ell tesseract-ocr-ara tesseract-ocr-heb tesseract-ocr-hin
                             fuse librsvg2-bin) ;;
    # make check-package: dpkg-deb and dpkg-shlibdeps, strip and strings, debootstrap, and curl
    # for the requests to badge serve.
    --with-package) packages+=(dpkg-dev binutils debootstrap curl) ;;
    *) echo "badge: unknown flag $flag (use --with-bench, --with-tests or --with-package)" >&2; exit 64 ;;
  esac
done
# The tests' fake servers are Python scripts.
command -v python3 >/dev/null || packages+=(python3 python3-pip)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "badge: installing Debian packages: ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "badge: run as root, or install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null; then
  echo "badge: no 'swift' on PATH; install Swift 6 (https://www.swift.org/install/linux/) and try again" >&2
  exit 1
fi
