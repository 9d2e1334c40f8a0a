#!/usr/bin/env python3
"""Writes Plugins/ProceduralBackend/IconKeywords.swift: every icon of Google's
Material Icons font (Debian's fonts-material-design-icons-iconfont) with its
codepoint, and the words that reach an icon, sorted for a binary search:

- the icons' own names: a one-word name ("piano", "kayaking"), the word after
  "sports_" or "local_" ("sports_tennis" is tennis), and a plural's singular;
  names of the user interface's icons ("add", "menu", "start") are left out;
- Unicode CLDR's emoji keywords, in the languages below: the keywords of an
  emoji that shows what an icon shows. An emoji is linked to an icon when its
  English name is one of the icon words above, or by the table LINKS below.

Run by hand when the font or the languages change; the build and the tests use
only the generated, committed file. Needs Debian's fonts-material-design-icons-iconfont
and unicode-cldr-core (apt-get install fonts-material-design-icons-iconfont unicode-cldr-core):

    scripts/icon-words.py > Plugins/ProceduralBackend/IconKeywords.swift

A keyword CLDR gives to more than 8 emoji in a language ("person", "face") says
nothing and is left out, as are keywords of more than one word, keywords that
two icons share in a language, CJK keywords of one character and other keywords
of fewer than three letters.
"""
import collections
import gzip
import os
import sys
import unicodedata
import xml.etree.ElementTree as ET

CODEPOINTS = "/usr/share/fonts-material-design-icons-iconfont/scss/_variables.scss"
ANNOTATIONS = "/usr/share/unicode/cldr/common/annotations"
LANGUAGES = ["en", "zh", "ja", "ko", "ru", "el", "ar", "he", "hi", "es", "fr", "de", "pt", "it", "nl",
             "pl", "sv", "da", "no", "fi", "tr", "cs", "uk", "id", "vi", "ro", "hu", "ca"]
UNSPACED = {"zh", "ja", "ko"}
GENERIC = 8

# Icons of the interface, not of things a promise is about: not reached by their names.
INTERFACE = set("""
abc add adjust adb analytics announcement aod api apps archive article assessment assignment assistant atm
attachment attribution autorenew backspace backup badge ballot block bookmark bookmarks build cached cancel
cast category check circle class clear close code collections colorize comment commit compare compress contrast
copyright crop css dangerous dashboard dataset deblur deselect details devices dialpad difference dns dock domain
done download downloading drafts duo dvr east eject email equalizer error expand explicit exposure extension face
fax feed feedback filter flag flaky flare flip folder forward fullscreen functions gesture gif grade gradient grading
grain help hevc highlight history hls html http https hub image inbox info input insights interests inventory iso
javascript key label lan launch layers lens link list login logout looks loop loupe margin markunread maximize
mediation menu merge minimize mms mode more nat navigation nfc north note notes notifications numbers opacity outbond
outbound outbox outlet output padding pages pageview pattern pause pending percent php pin pinch pix place
plagiarism policy poll polyline polymer portrait preview print publish queue quickreply quiz radar receipt recommend
redeem redo refresh remove reorder repartition repeat replay reply report restore reviews room rsvp rtt rule save
scanner schema screenshot sd search security segment sell send sensors settings share shortcut shuffle sip slideshow
sms sort sos source south splitscreen spoke square start stop storage straight straighten stream streetview style
subject subscript subscriptions subtitles summarize superscript support swipe sync tab tag task terminal texture
timeline title toc token toll tonality topic transform troubleshoot try tty tune tungsten unarchive undo unpublished
unsubscribe upcoming update upgrade upload usb verified vibration vignette visibility voicemail vrpano wallpaper
warning web webhook west widgets wifi window workspaces wysiwyg 10k 10mp 1k 2k 3k 3p 4k 5g 5k 6k 7k 8k 9k 123 360
adobe android discord facebook fitbit paypal quora reddit shopify snapchat telegram tiktok wechat whatsapp wordpress
messenger contacts contactless event today schedule alarm timer money euro payment payments paid discount shop
store storefront business
""".split())

# Emoji linked by hand to the icon that shows them, where the English name does not say it.
LINKS = {
    "🎹": "piano", "🎾": "sports_tennis", "⛳": "sports_golf", "🏌": "sports_golf", "🏀": "sports_basketball",
    "⚽": "sports_soccer", "🏈": "sports_football", "🏐": "sports_volleyball", "⚾": "sports_baseball",
    "🏏": "sports_cricket", "🏒": "sports_hockey", "🏑": "sports_hockey", "🏉": "sports_rugby", "🥋": "sports_martial_arts",
    "🤸": "sports_gymnastics", "🎮": "sports_esports", "🕹": "sports_esports", "🛹": "skateboarding", "🏄": "surfing",
    "🚣": "rowing", "⛵": "sailing", "🛶": "kayaking", "⛷": "downhill_skiing", "🎿": "downhill_skiing",
    "🏂": "snowboarding", "⛸": "ice_skating", "🪂": "paragliding", "🛷": "sledding", "🎣": "phishing",
    "🐕": "pets", "🐶": "pets", "🐈": "pets", "🐱": "pets", "🐾": "pets", "🐇": "cruelty_free", "🐰": "cruelty_free",
    "🐝": "emoji_nature", "🌷": "local_florist", "🌸": "local_florist", "💐": "local_florist", "🌻": "local_florist",
    "🌼": "local_florist", "🌹": "local_florist", "🏡": "yard", "🍕": "local_pizza", "🍦": "icecream", "🍨": "icecream",
    "🎂": "cake", "🍰": "cake", "🧁": "cake", "🍪": "cookie", "🍔": "fastfood", "🍟": "fastfood", "🍽": "restaurant",
    "🔬": "science", "🧪": "science", "🔭": "rocket", "🚀": "rocket", "💊": "medication", "💉": "vaccines",
    "🏛": "museum", "🎭": "theater_comedy", "🎬": "movie", "🎥": "movie", "🍿": "movie", "📰": "newspaper",
    "🚜": "agriculture", "🔨": "handyman", "🛠": "handyman", "🪚": "carpenter", "🏍": "motorcycle", "🛵": "moped",
    "🚗": "directions_car", "🚘": "directions_car", "🚆": "train", "🚂": "train", "🎲": "casino", "🧩": "extension",
    "🧸": "toys", "♻": "recycling", "🎤": "mic", "🎙": "mic", "🏰": "castle", "⛪": "church", "🕌": "mosque",
    "🕍": "synagogue", "🌋": "volcano", "🧼": "soap", "🚿": "shower", "🛁": "bathtub", "👶": "child_care",
    "🍼": "child_care", "🎉": "celebration", "🎊": "celebration", "🥚": "egg", "🚤": "directions_boat",
    "🚢": "directions_boat", "⚓": "anchor", "☂": "umbrella", "🌂": "umbrella", "🏕": "cabin", "🛖": "cabin",
    "🧗": "hiking", "🪴": "yard", "🌿": "grass", "🌾": "agriculture", "🐄": "agriculture", "🐐": "goat",
    "💎": "diamond", "👛": "wallet", "🏟": "stadium", "🎪": "festival", "🗺": "map", "🧭": "explore",
    "🛒": "shopping_cart", "🛍": "shopping_bag", "📺": "tv", "📻": "radio", "⌨": "keyboard", "🖱": "mouse",
    "🧠": "psychology", "🩺": "medical_services", "🏥": "local_hospital", "🧑‍🍳": "restaurant", "🏊": "pool",
    "🧽": "cleaning_services", "🧹": "cleaning_services", "🚭": "smoke_free", "🚲": "pedal_bike", "🛴": "electric_scooter",
}

# Multi-word icons reached by one word each, where neither their names nor CLDR reach them.
NAMED = {"fitness_center": "gym", "self_improvement": "meditation", "directions_run": "running",
         "directions_bike": "cycling", "downhill_skiing": "skiing", "ice_skating": "skating", "scuba_diving": "diving",
         "theater_comedy": "theatre", "emoji_nature": "bee", "cruelty_free": "rabbit", "child_care": "baby",
         "kayaking": "kayak", "skateboarding": "skateboard", "snowboarding": "snowboard"}


def icons():
    found = {}
    for line in open(CODEPOINTS, encoding="utf-8"):
        line = line.strip()
        if line.startswith('"') and '":' in line:
            name, value = line.split('":')
            found[name.strip('"')] = int(value.strip().rstrip(",").rstrip(")"), 16)
    return found


# Words too common or too vague in a promise to reach an icon ("get" is Swedish for goat).
STOP = set("""
get play work man woman person people group groups mood light power speed balance scale air bolt more less
week day daily today time new year month night morning evening every each
jouer jeu jugar juego giocare gioco spielen spiel spelen jogar jogo
""".split())


def name_words(codepoints):
    """Each word an icon's name gives, and its icon."""
    words = {}

    def add(word, icon):
        if word not in INTERFACE and word not in STOP and len(word) >= 3 and not word[0].isdigit():
            words.setdefault(word, icon)
            if word.endswith("s") and len(word) > 4 and not word.endswith("ss"):
                words.setdefault(word[:-1], icon)

    for name in sorted(codepoints):
        if "_" not in name:
            add(name, name)
        for prefix in ("sports_", "local_"):
            rest = name[len(prefix):]
            if name.startswith(prefix) and "_" not in rest:
                add(rest, name)
    for icon, word in NAMED.items():
        if icon in codepoints:
            words.setdefault(word, icon)
    return words


def keywords(path):
    """Each emoji's keywords in one annotations file, its spoken name among them."""
    found = collections.defaultdict(set)
    names = {}
    for node in ET.parse(path).getroot().iter("annotation"):
        if not node.text:
            continue
        emoji = node.get("cp").replace("\ufe0f", "")
        for word in node.text.split("|"):
            word = "".join(c for c in word.strip().lower() if unicodedata.category(c) != "Cf")
            word = unicodedata.normalize("NFC", word)
            if word:
                found[emoji].add(word)
                if node.get("type") == "tts":
                    names[emoji] = word
    return found, names


def main():
    for path in (CODEPOINTS, ANNOTATIONS):
        if not os.path.exists(path):
            sys.exit(f"icon-words: {path} is missing; install it: apt-get install fonts-material-design-icons-iconfont unicode-cldr-core")
    codepoints = icons()
    by_name = name_words(codepoints)
    english, english_names = keywords(os.path.join(ANNOTATIONS, "en.xml"))
    links = {}
    for emoji, name in english_names.items():
        icon = by_name.get(name.replace(" ", "_")) or (name.replace(" ", "_") if name.replace(" ", "_") in codepoints
                                                         and name.replace(" ", "_") not in INTERFACE else None)
        if icon:
            links[emoji] = icon
    for emoji, icon in LINKS.items():
        if icon in codepoints:
            links[emoji] = icon
    entries = {}
    for word, icon in by_name.items():
        entries[word] = (icon, "name")
    for language in LANGUAGES:
        found, _ = keywords(os.path.join(ANNOTATIONS, language + ".xml"))
        uses = collections.Counter(word for words in found.values() for word in words)
        votes = collections.defaultdict(set)
        for emoji, icon in links.items():
            for word in found.get(emoji, ()):
                short = len(word) < 2 if language in UNSPACED else len(word) < 3
                if uses[word] > GENERIC or " " in word or short:
                    continue
                votes[word].add(icon)
        for word, chosen in votes.items():
            if len(chosen) == 1 and word not in entries and word not in STOP:
                entries[word] = (chosen.pop(), language)
    version = "unknown"
    changelog = "/usr/share/doc/unicode-cldr-core/changelog.Debian.gz"
    if os.path.exists(changelog):
        version = gzip.open(changelog, "rt").readline().split("(")[1].split(")")[0]
    font = "unknown"
    changelog = "/usr/share/doc/fonts-material-design-icons-iconfont/changelog.Debian.gz"
    if os.path.exists(changelog):
        font = gzip.open(changelog, "rt").readline().split("(")[1].split(")")[0]
    out = sys.stdout
    out.write(f"""// Generated by scripts/icon-words.py from the Material Icons font's codepoints
// (Debian fonts-material-design-icons-iconfont {font}, Apache-2.0: the names of
// Google's Material Icons) and the Unicode CLDR emoji annotations (Debian
// unicode-cldr-core {version}, under the Unicode licence quoted in
// MotifKeywords.swift). Do not edit: run the script again.

extension IconCatalog {{
    /// Every icon of the font, one a line, "name<TAB>codepoint in hex", sorted by name's bytes.
    static let names: StaticString = \"\"\"
""")
    for name in sorted(codepoints, key=lambda n: n.encode()):
        out.write(f"{name}\t{codepoints[name]:x}\n")
    out.write('"""\n\n    /// How many icons the font has.\n')
    out.write(f"    static let count = {len(codepoints)}\n\n")
    out.write('    /// The words that reach an icon, one a line, "word<TAB>icon<TAB>source", sorted by\n')
    out.write('    /// word\'s bytes: the source is "name" (the icon\'s own name) or the language of a CLDR keyword.\n')
    out.write('    static let words: StaticString = """\n')
    for word in sorted(entries, key=lambda w: w.encode()):
        icon, source = entries[word]
        out.write(f"{word}\t{icon}\t{source}\n")
    out.write('"""\n}\n')


main()
