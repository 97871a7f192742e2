/* SHA-256 (FIPS 180-4), for content-addressed caches (the compiled seccomp filter). */
#ifndef SBX_SHA256_H
#define SBX_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sha256
{
  uint32_t h[8];
  uint64_t len;
  unsigned char buf[64];
  size_t fill;
  bool portable; /* set after sha256_init to avoid the CPU's SHA instructions (tests) */
};

void sha256_init (struct sha256 *s);
void sha256_update (struct sha256 *s, const void *data, size_t len);
void sha256_final (struct sha256 *s, unsigned char out[32]);
/* 64 hex digits + NUL */
void sha256_hex (const void *data, size_t len, char out[65]);

#endif
