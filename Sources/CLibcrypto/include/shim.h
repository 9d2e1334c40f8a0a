// OpenSSL's libcrypto, for SHA-256, opened on first use (CLazyLibrary says why:
// only batches and reproducible runs need the hash; docs/PERFORMANCE.md has what
// linking it would cost). badge_libcrypto_load() opens it; each
// function badge calls is badge_<libcrypto's name> here, forwarding to it.
#ifndef BADGE_CLIBCRYPTO_SHIM_H
#define BADGE_CLIBCRYPTO_SHIM_H

#include <openssl/evp.h>
#include <stddef.h>

#include "badge_lazy_library.h"

// Each entry: return type, name, parameters, arguments.
#define BADGE_LIBCRYPTO_FUNCTIONS(RETURNING, VOID, OPTIONAL)                                             \
    RETURNING(EVP_MD_CTX *, EVP_MD_CTX_new, (void), ())                                                 \
    VOID(EVP_MD_CTX_free, (EVP_MD_CTX *ctx), (ctx))                                                     \
    RETURNING(const EVP_MD *, EVP_sha256, (void), ())                                                   \
    RETURNING(int, EVP_DigestInit_ex, (EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl), (ctx, type, impl)) \
    RETURNING(int, EVP_DigestUpdate, (EVP_MD_CTX *ctx, const void *d, size_t cnt), (ctx, d, cnt))        \
    RETURNING(int, EVP_DigestFinal_ex, (EVP_MD_CTX *ctx, unsigned char *md, unsigned int *s), (ctx, md, s))

BADGE_LIBCRYPTO_FUNCTIONS(BADGE_LAZY_DECLARE, BADGE_LAZY_DECLARE_VOID, BADGE_LAZY_DECLARE)

// Opens libcrypto (BADGE_SONAME_LIBCRYPTO) once; 0 when it is loaded, else -1 with the reason in `message`.
int badge_libcrypto_load(char *message, size_t capacity);

#endif
