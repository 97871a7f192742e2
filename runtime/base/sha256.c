#include "build-config.h"
#include "runtime/base/sha256.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const uint32_t k[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void
block (struct sha256 *s, const unsigned char *p)
{
  uint32_t w[64], a, b, c, d, e, f, g, h;
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16 | (uint32_t) p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++)
    {
      uint32_t s0 = ROR (w[i - 15], 7) ^ ROR (w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = ROR (w[i - 2], 17) ^ ROR (w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
  a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
  for (int i = 0; i < 64; i++)
    {
      uint32_t t1 = h + (ROR (e, 6) ^ ROR (e, 11) ^ ROR (e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      uint32_t t2 = (ROR (a, 2) ^ ROR (a, 13) ^ ROR (a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
  s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d, s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

/* The SHA extensions of x86 (AMD Zen, Intel since Ice Lake): about ten times the
 * portable code, which matters for the seccomp cache key (a 20-50 KB profile hashed
 * on every create). Same results: tests/unit/sha256_test.c checks both. */
#if defined(__x86_64__)
#include <immintrin.h>
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h> /* glibc >= 2.34 */
#else
#include <cpuid.h>
#endif

/* What glibc found at start-up (it asked cpuid then): asking again here would cost
 * two cpuid instructions, each a VM exit of ~4 us on a virtual machine. */
static bool
cpu_has_sha_ni (void)
{
  static int known = -1;
  if (known >= 0)
    return known;
#if __has_include(<sys/platform/x86.h>)
  known = CPU_FEATURE_ACTIVE (SHA) && CPU_FEATURE_ACTIVE (SSE4_1) && CPU_FEATURE_ACTIVE (SSSE3);
#else
  {
    unsigned a, b, c, d;
    known = __get_cpuid_count (7, 0, &a, &b, &c, &d) && (b & (1u << 29)) && __get_cpuid (1, &a, &b, &c, &d)
            && (c & bit_SSE4_1) && (c & bit_SSSE3);
  }
#endif
  return known;
}

__attribute__ ((target ("sha,sse4.1,ssse3"))) static void
blocks_ni (uint32_t state[8], const unsigned char *p, size_t n)
{
  const __m128i bswap = _mm_set_epi64x (0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i tmp = _mm_loadu_si128 ((const __m128i *) &state[0]);
  __m128i st1 = _mm_loadu_si128 ((const __m128i *) &state[4]);
  __m128i st0;
  tmp = _mm_shuffle_epi32 (tmp, 0xB1);      /* CDAB */
  st1 = _mm_shuffle_epi32 (st1, 0x1B);      /* EFGH */
  st0 = _mm_alignr_epi8 (tmp, st1, 8);      /* ABEF */
  st1 = _mm_blend_epi16 (st1, tmp, 0xF0);   /* CDGH */
  for (; n > 0; n--, p += 64)
    {
      __m128i abef = st0, cdgh = st1, w[4];
      for (int i = 0; i < 4; i++)
        w[i] = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (p + 16 * i)), bswap);
      for (int i = 0; i < 16; i++)
        {
          /* rounds 4i..4i+3 with message words w[i % 4] */
          __m128i m = _mm_add_epi32 (w[i & 3], _mm_loadu_si128 ((const __m128i *) &k[4 * i]));
          st1 = _mm_sha256rnds2_epu32 (st1, st0, m);
          st0 = _mm_sha256rnds2_epu32 (st0, st1, _mm_shuffle_epi32 (m, 0x0E));
          if (i < 12)
            {
              /* w[t] for the rounds 16 later: msg1 gives w[t-16] + s0(w[t-15]), alignr
                 adds w[t-7], msg2 adds s1(w[t-2]) */
              __m128i x = _mm_sha256msg1_epu32 (w[i & 3], w[(i + 1) & 3]);
              x = _mm_add_epi32 (x, _mm_alignr_epi8 (w[(i + 3) & 3], w[(i + 2) & 3], 4));
              w[i & 3] = _mm_sha256msg2_epu32 (x, w[(i + 3) & 3]);
            }
        }
      st0 = _mm_add_epi32 (st0, abef);
      st1 = _mm_add_epi32 (st1, cdgh);
    }
  tmp = _mm_shuffle_epi32 (st0, 0x1B);      /* FEBA */
  st1 = _mm_shuffle_epi32 (st1, 0xB1);      /* DCHG */
  st0 = _mm_blend_epi16 (tmp, st1, 0xF0);   /* DCBA */
  st1 = _mm_alignr_epi8 (st1, tmp, 8);      /* HGFE */
  _mm_storeu_si128 ((__m128i *) &state[0], st0);
  _mm_storeu_si128 ((__m128i *) &state[4], st1);
}
#endif

static void
blocks (struct sha256 *s, const unsigned char *p, size_t n)
{
#if defined(__x86_64__)
  if (!s->portable && cpu_has_sha_ni ())
    {
      blocks_ni (s->h, p, n);
      return;
    }
#endif
  for (; n > 0; n--, p += 64)
    block (s, p);
}

void
sha256_init (struct sha256 *s)
{
  static const uint32_t init[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
  memcpy (s->h, init, sizeof init);
  s->len = 0;
  s->fill = 0;
  s->portable = false;
}

void
sha256_update (struct sha256 *s, const void *data, size_t len)
{
  const unsigned char *p = data;
  s->len += len;
  while (len > 0)
    {
      size_t n;
      if (s->fill == 0 && len >= 64)
        {
          /* whole blocks straight from the input */
          n = len / 64;
          blocks (s, p, n);
          p += n * 64;
          len -= n * 64;
          continue;
        }
      n = 64 - s->fill < len ? 64 - s->fill : len;
      memcpy (s->buf + s->fill, p, n);
      s->fill += n;
      p += n;
      len -= n;
      if (s->fill == 64)
        {
          blocks (s, s->buf, 1);
          s->fill = 0;
        }
    }
}

void
sha256_final (struct sha256 *s, unsigned char out[32])
{
  uint64_t bits = s->len * 8;
  unsigned char pad = 0x80, zero = 0, lenbuf[8];
  sha256_update (s, &pad, 1);
  while (s->fill != 56)
    sha256_update (s, &zero, 1);
  for (int i = 0; i < 8; i++)
    lenbuf[i] = (unsigned char) (bits >> (56 - 8 * i));
  sha256_update (s, lenbuf, 8);
  for (int i = 0; i < 8; i++)
    {
      out[4 * i] = (unsigned char) (s->h[i] >> 24);
      out[4 * i + 1] = (unsigned char) (s->h[i] >> 16);
      out[4 * i + 2] = (unsigned char) (s->h[i] >> 8);
      out[4 * i + 3] = (unsigned char) s->h[i];
    }
}

void
sha256_hex (const void *data, size_t len, char out[65])
{
  struct sha256 s;
  unsigned char d[32];
  sha256_init (&s);
  sha256_update (&s, data, len);
  sha256_final (&s, d);
  for (int i = 0; i < 32; i++)
    sprintf (out + 2 * i, "%02x", d[i]);
}
