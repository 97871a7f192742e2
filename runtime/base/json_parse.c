/* Parsing JSON into a yajl_tree-compatible tree (json.h says what is refused and
 * why): an arena for the whole document, duplicate-key detection, and the parser. */
#include "build-config.h"
#include "runtime/base/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/base/util.h"


/* Duplicate-key detection: a linear scan for small objects, a hash set once an
 * object grows past KEYSET_THRESHOLD keys (a 150k-key annotation map must not take
 * quadratic time). One set per nesting level, freed when the object closes. */
#define KEYSET_THRESHOLD 16

struct keyset
{
  size_t cap; /* power of two, 0 when unused */
  const char **slots;
};

static uint64_t
hash_key (const char *s)
{
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (unsigned char) *s) * 1099511628211ULL;
  return h;
}

/* Returns false if the key was already present. */
static bool
keyset_insert (struct keyset *k, const char *key)
{
  size_t i = hash_key (key) & (k->cap - 1);
  while (k->slots[i])
    {
      if (strcmp (k->slots[i], key) == 0)
        return false;
      i = (i + 1) & (k->cap - 1);
    }
  k->slots[i] = key;
  return true;
}

static void
keyset_grow (struct keyset *k, yajl_val obj)
{
  /* Keep the load factor under 1/2: rebuild from the object's keys. */
  size_t want = 64;
  while (want < obj->u.object.len * 4)
    want *= 2;
  free (k->slots);
  k->slots = xmalloc0 (want * sizeof (char *));
  k->cap = want;
  for (size_t i = 0; i < obj->u.object.len; i++)
    keyset_insert (k, obj->u.object.keys[i]);
}

/* Every node and string of a parsed document comes from one arena, freed at once by
 * json_free of the root: a 20 KB config is a few thousand nodes, and malloc/free of
 * each was a third of create's own work. Under ASan each allocation is its own
 * malloc, so overflows are still caught one by one. */
struct arena_chunk
{
  struct arena_chunk *next;
  size_t used, cap;
  max_align_t data[];
};

struct json_arena
{
  struct arena_chunk *chunks;
  size_t next_cap;
};

#if defined(__SANITIZE_ADDRESS__)
#define ARENA_PER_ALLOCATION 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_PER_ALLOCATION 1
#endif
#endif

static void *
arena_alloc (struct json_arena *a, size_t n)
{
  struct arena_chunk *c = a->chunks;
  n = (n + sizeof (max_align_t) - 1) & ~(sizeof (max_align_t) - 1);
#ifndef ARENA_PER_ALLOCATION
  if (!c || c->cap - c->used < n)
#endif
    {
      size_t cap = n > a->next_cap ? n : a->next_cap;
#ifdef ARENA_PER_ALLOCATION
      cap = n;
#endif
      c = malloc (sizeof *c + cap); /* not zeroed: nodes are, strings need not be */
      if (!c)
        sbx_out_of_memory ();
      c->used = 0;
      c->cap = cap;
      c->next = a->chunks;
      a->chunks = c;
      if (a->next_cap < (1u << 20))
        a->next_cap *= 2;
    }
  {
    void *p = (char *) c->data + c->used;
    c->used += n;
    return p;
  }
}

static void *
arena_zalloc (struct json_arena *a, size_t n)
{
  return memset (arena_alloc (a, n), 0, n);
}

static char *
arena_strndup (struct json_arena *a, const char *s, size_t len)
{
  char *p = arena_alloc (a, len + 1);
  memcpy (p, s, len);
  p[len] = '\0';
  return p;
}

static void
arena_free (struct json_arena *a)
{
  struct arena_chunk *c = a->chunks;
  while (c)
    {
      struct arena_chunk *next = c->next;
      free (c);
      c = next;
    }
  free (a);
}

struct builder
{
  yajl_val stack[SBX_JSON_MAX_DEPTH + 1];
  struct keyset keys[SBX_JSON_MAX_DEPTH + 1];
  size_t depth;
  char *key; /* pending object key, owned until attached */
  yajl_val root;
  const char *fail; /* our reason for stopping the parse */
  struct json_arena *arena;
  bool defer_seccomp_rules;                      /* json_parse_config */
  const char *stack_key[SBX_JSON_MAX_DEPTH + 1]; /* the key each open container is under */
};

/* Objects and arrays carry where they are in the parsed text (json_span); the root,
 * whatever its type, is one too and owns the arena. */
struct container_node
{
  struct yajl_val_s v; /* first: the node's address is the allocation's */
  size_t start, end;
  struct json_arena *arena; /* the root's: everything of the document */
  bool deferred;            /* an array left unparsed (json_parse_config) */
};

/* The root is the first value parsed, at depth 0: it gets the bigger node. */
static yajl_val
node_alloc (struct builder *b, yajl_type type)
{
  yajl_val v;
  if (b->depth == 0 && !b->root)
    {
      struct container_node *c = arena_zalloc (b->arena, sizeof *c);
      c->arena = b->arena;
      v = &c->v;
    }
  else if (type == yajl_t_object || type == yajl_t_array)
    v = arena_zalloc (b->arena, sizeof (struct container_node));
  else
    v = arena_zalloc (b->arena, sizeof *v);
  v->type = type;
  return v;
}


/* Arrays grow to the next power of two (capacity is implicit in len). */
static bool
needs_growth (size_t len)
{
  return len == 0 || (len >= 4 && (len & (len - 1)) == 0);
}

static size_t
grown_capacity (size_t len)
{
  return len == 0 ? 4 : len * 2;
}

static int
attach (struct builder *b, yajl_val v)
{
  yajl_val parent;
  if (b->depth == 0)
    {
      b->root = v;
      return 1;
    }
  parent = b->stack[b->depth - 1];
  if (parent->type == yajl_t_object)
    {
      size_t n = parent->u.object.len;
      struct keyset *ks = &b->keys[b->depth - 1];
      bool dup = false;
      if (n < KEYSET_THRESHOLD)
        {
          for (size_t i = 0; i < n && !dup; i++)
            dup = parent->u.object.keys[i][0] == b->key[0] && strcmp (parent->u.object.keys[i], b->key) == 0;
        }
      else
        {
          if (ks->cap < (n + 1) * 2)
            keyset_grow (ks, parent);
          dup = !keyset_insert (ks, b->key);
        }
      if (dup)
        {
          b->fail = "duplicate object key"; /* v goes with the arena */
          return 0;
        }
      if (needs_growth (n))
        {
          size_t cap = grown_capacity (n);
          const char **keys = arena_alloc (b->arena, cap * sizeof (char *));
          yajl_val *values = arena_alloc (b->arena, cap * sizeof (yajl_val));
          if (n)
            {
              memcpy (keys, parent->u.object.keys, n * sizeof (char *));
              memcpy (values, parent->u.object.values, n * sizeof (yajl_val));
            }
          parent->u.object.keys = keys;
          parent->u.object.values = values;
        }
      parent->u.object.keys[n] = steal_pointer (&b->key);
      parent->u.object.values[n] = v;
      parent->u.object.len = n + 1;
    }
  else
    {
      size_t n = parent->u.array.len;
      if (needs_growth (n))
        {
          yajl_val *values = arena_alloc (b->arena, grown_capacity (n) * sizeof (yajl_val));
          if (n)
            memcpy (values, parent->u.array.values, n * sizeof (yajl_val));
          parent->u.array.values = values;
        }
      parent->u.array.values[n] = v;
      parent->u.array.len = n + 1;
    }
  return 1;
}

static int
cb_literal (struct builder *b, yajl_type type)
{
  return attach (b, node_alloc (b, type));
}

static int
cb_number (struct builder *b, const char *s, size_t len)
{
  /* Keep the raw text: integers are parsed by the typed accessors with exact
   * uint64/int64 range checks (a long long cannot hold 2^64-1). */
  yajl_val v = node_alloc (b, yajl_t_number);
  v->u.number.r = arena_strndup (b->arena, s, len);
  return attach (b, v);
}

/* s: decoded in the arena already (parse_string), len without the terminator. */
static int
cb_string (struct builder *b, char *s, size_t len, bool is_key)
{
  yajl_val v;
  if (memchr (s, '\0', len))
    {
      b->fail = is_key ? "object key contains a NUL character" : "string contains a NUL character";
      return 0;
    }
  if (is_key)
    {
      b->key = s;
      return 1;
    }
  v = node_alloc (b, yajl_t_string);
  v->u.string = s;
  return attach (b, v);
}

static int
push (struct builder *b, yajl_type type, size_t at)
{
  yajl_val v;
  if (b->depth >= SBX_JSON_MAX_DEPTH)
    {
      b->fail = "nesting is deeper than the limit of " "64" " levels";
      return 0;
    }
  const char *key = b->key; /* attach takes it; it stays in the arena */
  v = node_alloc (b, type);
  ((struct container_node *) v)->start = at; /* the '{' or '[' */
  if (!attach (b, v))
    return 0;
  b->stack_key[b->depth] = key;
  b->stack[b->depth++] = v;
  return 1;
}

static int
cb_end (struct builder *b, size_t after)
{
  b->depth--;
  ((struct container_node *) b->stack[b->depth])->end = after; /* past the '}' or ']' */
  free (b->keys[b->depth].slots);
  b->keys[b->depth].slots = NULL;
  b->keys[b->depth].cap = 0;
  return 1;
}

static void
offset_to_line_col (const char *buf, size_t off, size_t *line, size_t *col)
{
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < off; i++)
    {
      if (buf[i] == '\n')
        {
          (*line)++;
          *col = 1;
        }
      else
        (*col)++;
    }
}

/* ------------------------------------------------------------------ the parser */

/* RFC 8259, strictly: no comments, no trailing commas, no NaN or leading zeros,
 * strings of valid UTF-8 (escapes included: no lone surrogates), nothing after the
 * root value. Events go to the builder above. Our own rather than yajl's event
 * parser: every run parses its config (20 KB and more with a seccomp profile) and
 * yajl's lexer spent some 20 instructions a byte on it; this one copies plain runs
 * of a string with memcpy. The fuzzer (tests/fuzz) drives it through the config
 * parser. */
struct parser
{
  const char *buf, *p, *end;
  struct builder *b;
  const char *fail; /* the reason; p is where */
};

static bool
fail_at (struct parser *P, const char *at, const char *why)
{
  P->p = at;
  P->fail = why;
  return false;
}

static void
skip_ws (struct parser *P)
{
  const char *p = P->p;
  while (p < P->end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
    p++;
  P->p = p;
}

static bool
is_digit (char c)
{
  return c >= '0' && c <= '9';
}

/* The length of the valid UTF-8 sequence at s (its lead byte >= 0x80), or 0. */
static size_t
utf8_len (const unsigned char *s, const unsigned char *end)
{
  unsigned c = s[0];
  size_t n;
  uint32_t cp, min;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2, cp = c & 0x1F, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF)
    n = 3, cp = c & 0x0F, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4)
    n = 4, cp = c & 0x07, min = 0x10000;
  else
    return 0;
  if ((size_t) (end - s) < n)
    return 0;
  for (size_t i = 1; i < n; i++)
    {
      if ((s[i] & 0xC0) != 0x80)
        return 0;
      cp = cp << 6 | (s[i] & 0x3F);
    }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

static int32_t
hex4 (const char *s)
{
  int32_t v = 0;
  for (int i = 0; i < 4; i++)
    {
      char c = s[i];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0)
        return -1;
      v = v * 16 + d;
    }
  return v;
}

static size_t
put_utf8 (char *o, uint32_t cp)
{
  if (cp < 0x80)
    return o[0] = (char) cp, 1;
  if (cp < 0x800)
    return o[0] = (char) (0xC0 | cp >> 6), o[1] = (char) (0x80 | (cp & 0x3F)), 2;
  if (cp < 0x10000)
    return o[0] = (char) (0xE0 | cp >> 12), o[1] = (char) (0x80 | ((cp >> 6) & 0x3F)),
           o[2] = (char) (0x80 | (cp & 0x3F)), 3;
  return o[0] = (char) (0xF0 | cp >> 18), o[1] = (char) (0x80 | ((cp >> 12) & 0x3F)),
         o[2] = (char) (0x80 | ((cp >> 6) & 0x3F)), o[3] = (char) (0x80 | (cp & 0x3F)), 4;
}

/* A \u escape at p (p[0] is the backslash, stop the closing quote): the code point
 * into *cp, the escape's length returned, 0 if invalid. A surrogate pair is one. */
static size_t
unicode_escape (const char *p, const char *stop, uint32_t *cp)
{
  int32_t hi, lo;
  if (stop - p < 6 || (hi = hex4 (p + 2)) < 0)
    return 0;
  if (hi < 0xD800 || hi > 0xDFFF)
    return *cp = (uint32_t) hi, 6;
  if (hi > 0xDBFF || stop - p < 12 || p[6] != '\\' || p[7] != 'u' || (lo = hex4 (p + 8)) < 0xDC00 || lo > 0xDFFF)
    return 0; /* a lone surrogate is no character */
  *cp = 0x10000 + (((uint32_t) hi - 0xD800) << 10) + ((uint32_t) lo - 0xDC00);
  return 12;
}

/* The string whose opening quote is at P->p, decoded into the arena. */
static bool
parse_string (struct parser *P, char **out, size_t *out_len)
{
  const char *start = P->p + 1, *stop = start, *p;
  char *o, *q;
  /* first the closing quote (an escaped character is skipped), to size the copy */
  while (stop < P->end && *stop != '"')
    stop += *stop == '\\' ? 2 : 1;
  if (stop >= P->end)
    return fail_at (P, P->end, "premature end of input inside a string");
  q = o = arena_alloc (P->b->arena, (size_t) (stop - start) + 1);
  for (p = start; p < stop;)
    {
      const char *run = p;
      unsigned char c;
      while (p < stop && (unsigned char) (*p - 0x20) < 0x60 && *p != '\\')
        p++; /* printable ASCII: copied as a block */
      memcpy (q, run, (size_t) (p - run));
      q += p - run;
      if (p >= stop)
        break;
      c = (unsigned char) *p;
      if (c == '\\')
        {
          static const char plain[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
          const char *m = strchr (plain, p[1]);
          uint32_t cp;
          size_t n;
          if (p[1] == 'u')
            {
              if (!(n = unicode_escape (p, stop, &cp)))
                return fail_at (P, p, "invalid \\u escape (or a lone surrogate) in a string");
              q += put_utf8 (q, cp);
              p += n;
            }
          else if (p[1] && m && (m - plain) % 2 == 0)
            {
              *q++ = m[1];
              p += 2;
            }
          else
            return fail_at (P, p, "invalid escape in a string");
        }
      else if (c < 0x20)
        return fail_at (P, p, "control character in a string (escape it)");
      else
        {
          size_t n = utf8_len ((const unsigned char *) p, (const unsigned char *) stop);
          if (!n)
            return fail_at (P, p, "invalid UTF-8 in a string");
          memcpy (q, p, n);
          q += n;
          p += n;
        }
    }
  *q = '\0';
  *out = o;
  *out_len = (size_t) (q - o);
  P->p = stop + 1;
  return true;
}

static bool
parse_number (struct parser *P)
{
  const char *s = P->p, *p = s, *end = P->end;
  if (p < end && *p == '-')
    p++;
  if (p < end && *p == '0')
    p++;
  else if (p < end && *p >= '1' && *p <= '9')
    while (p < end && is_digit (*p))
      p++;
  else
    return fail_at (P, p, "invalid number");
  if (p < end && *p == '.')
    {
      if (++p >= end || !is_digit (*p))
        return fail_at (P, p, "invalid number: a digit must follow the decimal point");
      while (p < end && is_digit (*p))
        p++;
    }
  if (p < end && (*p == 'e' || *p == 'E'))
    {
      if (++p < end && (*p == '+' || *p == '-'))
        p++;
      if (p >= end || !is_digit (*p))
        return fail_at (P, p, "invalid number: the exponent has no digit");
      while (p < end && is_digit (*p))
        p++;
    }
  P->p = p;
  return cb_number (P->b, s, (size_t) (p - s)) || fail_at (P, p, P->b->fail);
}

static bool
parse_literal (struct parser *P, const char *word, yajl_type type)
{
  size_t n = strlen (word);
  if ((size_t) (P->end - P->p) < n || memcmp (P->p, word, n) != 0)
    return fail_at (P, P->p, "invalid literal (true, false and null are)");
  P->p += n;
  return cb_literal (P->b, type) || fail_at (P, P->p, P->b->fail);
}

static const char *
unexpected (char c, const char *otherwise)
{
  return c == '/' ? "comments are not allowed in JSON" : otherwise;
}

static bool parse_value (struct parser *P);

/* json_parse_config leaves linux.seccomp.syscalls unparsed: the array is most of a
 * config with a seccomp profile (300 names and more), and the runtime needs it only
 * when the compiled filter is not in its cache, whose key hashes the seccomp
 * section's bytes. The bytes of a cached section were parsed strictly when it was
 * compiled (json_parse_deferred); the same bytes with the same brackets are the same
 * valid JSON. */
static bool
at_seccomp_rules (const struct builder *b)
{
  return b->defer_seccomp_rules && b->depth == 3 && b->key && strcmp (b->key, "syscalls") == 0
         && b->stack_key[2] && strcmp (b->stack_key[2], "seccomp") == 0 && b->stack_key[1]
         && strcmp (b->stack_key[1], "linux") == 0;
}

/* The array at P->p ('['), skipped to its matching ']' by brackets and strings
 * only: an empty array node that knows its span, marked deferred. A malformed
 * inside is found when json_parse_deferred parses it. */
static bool
skip_deferred_array (struct parser *P)
{
  /* what the skip stops at; everything else is one table load a byte */
  enum { PLAIN, QUOTE, OPEN, CLOSE };
  static const unsigned char class[256] = { ['"'] = QUOTE, ['['] = OPEN, ['{'] = OPEN, [']'] = CLOSE, ['}'] = CLOSE };
  size_t depth = 0;
  const char *p = P->p;
  if (!push (P->b, yajl_t_array, (size_t) (p - P->buf)))
    return fail_at (P, p, P->b->fail);
  for (; p < P->end; p++)
    {
      unsigned char k = class[(unsigned char) *p];
      if (k == PLAIN)
        continue;
      if (k == QUOTE)
        {
          for (p++; p < P->end && *p != '"'; p++)
            if (*p == '\\')
              p++;
          if (p >= P->end)
            break;
        }
      else if (k == OPEN)
        {
          if (++depth > SBX_JSON_MAX_DEPTH)
            return fail_at (P, p, "nesting is deeper than the limit of " "64" " levels");
        }
      else if (--depth == 0)
        {
          P->p = p + 1;
          ((struct container_node *) P->b->stack[P->b->depth - 1])->deferred = true;
          return cb_end (P->b, (size_t) (P->p - P->buf));
        }
    }
  return fail_at (P, P->end, "premature end of input in an array");
}

/* An object or array whose opening bracket is at P->p. */
static bool
parse_container (struct parser *P, bool object)
{
  char close = object ? '}' : ']';
  if (!push (P->b, object ? yajl_t_object : yajl_t_array, (size_t) (P->p - P->buf)))
    return fail_at (P, P->p, P->b->fail);
  P->p++;
  skip_ws (P);
  if (P->p < P->end && *P->p == close)
    {
      P->p++;
      return cb_end (P->b, (size_t) (P->p - P->buf));
    }
  for (;;)
    {
      if (object)
        {
          char *key;
          size_t len;
          if (P->p >= P->end)
            return fail_at (P, P->end, "premature end of input in an object");
          if (*P->p != '"')
            return fail_at (P, P->p, unexpected (*P->p, "expected a string as the object key"));
          if (!parse_string (P, &key, &len))
            return false;
          if (!cb_string (P->b, key, len, true))
            return fail_at (P, P->p, P->b->fail);
          skip_ws (P);
          if (P->p >= P->end || *P->p != ':')
            return fail_at (P, P->p, "expected ':' after the object key");
          P->p++;
          skip_ws (P);
        }
      if (!parse_value (P))
        return false;
      skip_ws (P);
      if (P->p >= P->end)
        return fail_at (P, P->end, object ? "premature end of input in an object" : "premature end of input in an array");
      if (*P->p == close)
        {
          P->p++;
          return cb_end (P->b, (size_t) (P->p - P->buf));
        }
      if (*P->p != ',')
        return fail_at (P, P->p, unexpected (*P->p, object ? "expected ',' or '}'" : "expected ',' or ']'"));
      P->p++;
      skip_ws (P);
    }
}

static bool
parse_value (struct parser *P)
{
  char *s;
  size_t len;
  if (P->p >= P->end)
    return fail_at (P, P->end, "premature end of input, a value expected");
  switch (*P->p)
    {
    case '{':
      return parse_container (P, true);
    case '[':
      if (at_seccomp_rules (P->b))
        return skip_deferred_array (P);
      return parse_container (P, false);
    case '"':
      return parse_string (P, &s, &len) && (cb_string (P->b, s, len, false) || fail_at (P, P->p, P->b->fail));
    case 't':
      return parse_literal (P, "true", yajl_t_true);
    case 'f':
      return parse_literal (P, "false", yajl_t_false);
    case 'n':
      return parse_literal (P, "null", yajl_t_null);
    default:
      if (*P->p == '-' || is_digit (*P->p))
        return parse_number (P);
      return fail_at (P, P->p, unexpected (*P->p, "unexpected character, a value expected"));
    }
}

/* One value in buf[start, end), which must hold nothing else; errors and spans count
 * from buf. */
static yajl_val
parse_document (const char *buf, size_t start, size_t end, const char *what, bool defer, struct sbx_error *err)
{
  struct builder b = { .defer_seccomp_rules = defer };
  struct parser P = { .buf = buf, .p = buf + start, .end = buf + end, .b = &b };
  const char *nul = memchr (buf + start, '\0', end - start);
  size_t line, col;
  bool ok;

  if (nul)
    {
      offset_to_line_col (buf, (size_t) (nul - buf), &line, &col);
      sbx_error_set (err, 0, "%s: parse error at line %zu col %zu: NUL byte in input", what, line, col);
      return NULL;
    }
  skip_ws (&P);
  if (P.p >= P.end)
    {
      sbx_error_set (err, 0, "%s: parse error: empty document", what);
      return NULL;
    }
  b.arena = xmalloc0 (sizeof *b.arena);
  b.arena->next_cap = (end - start) * 2 + 1024; /* one chunk for most documents */
  ok = parse_value (&P);
  if (ok)
    {
      skip_ws (&P);
      if (P.p < P.end)
        ok = fail_at (&P, P.p, unexpected (*P.p, "trailing garbage after the document"));
    }
  if (ok)
    return b.root;
  offset_to_line_col (buf, (size_t) (P.p - buf), &line, &col);
  sbx_error_set (err, 0, "%s: parse error at line %zu col %zu: %s", what, line, col, P.fail ? P.fail : "invalid JSON");
  for (size_t i = 0; i <= SBX_JSON_MAX_DEPTH; i++)
    free (b.keys[i].slots);
  arena_free (b.arena);
  return NULL;
}

yajl_val
json_parse (const char *buf, size_t len, const char *what, struct sbx_error *err)
{
  return parse_document (buf, 0, len, what, false, err);
}

yajl_val
json_parse_config (const char *buf, size_t len, const char *what, struct sbx_error *err)
{
  return parse_document (buf, 0, len, what, true, err);
}

bool
json_is_deferred (yajl_val v)
{
  return v && v->type == yajl_t_array && ((const struct container_node *) v)->deferred;
}

yajl_val
json_parse_deferred (const char *text, yajl_val v, const char *what, struct sbx_error *err)
{
  const struct container_node *c = (const struct container_node *) v;
  if (!json_is_deferred (v))
    {
      sbx_error_set (err, 0, "%s: internal error: not a deferred array", what);
      return NULL;
    }
  return parse_document (text, c->start, c->end, what, false, err);
}

void
json_free (yajl_val root)
{
  /* Only a root (what json_parse returned) owns anything: the arena of its document. */
  struct container_node *c = (struct container_node *) root;
  if (root && c->arena)
    arena_free (c->arena);
}


bool
json_span (yajl_val v, size_t *start, size_t *end)
{
  const struct container_node *c = (const struct container_node *) v;
  if (!v || (v->type != yajl_t_object && v->type != yajl_t_array) || c->end <= c->start)
    return false;
  *start = c->start;
  *end = c->end;
  return true;
}

