/*
 * names.c - kernel names inside one payload: cubin entry symbols (libelf),
 * PTX .entry directives, and kernel-name format strings in host read-only
 * data.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>

#include <gelf.h>
#include <libelf.h>

#include "internal.h"

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static int elf_ok;

static void elf_init(void)
{
    elf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

int kinv_elf_ready(void)
{
    pthread_once(&elf_once, elf_init);
    return elf_ok;
}

/*
 * data must stay writable for the lifetime of the Elf handle in principle
 * (elf_memory takes a char *); libelf only writes when it converts a foreign
 * byte order, and we accept little-endian images only.
 */
int kinv_elf_check_shdrs(const uint8_t *img, size_t size, const char *what, struct kinv_err *err)
{
    int is64 = img[EI_CLASS] == ELFCLASS64;
    size_t ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
    if (size < ehsize)
        return kinv_error(err, "truncated %s ELF header: %zu bytes at offset 0, %zu needed", what, size, ehsize);
    uint64_t shoff = is64 ? kinv_rd64(img + 0x28) : kinv_rd32(img + 0x20);
    uint16_t shentsize = kinv_rd16(img + (is64 ? 0x3a : 0x2e));
    uint64_t shnum = kinv_rd16(img + (is64 ? 0x3c : 0x30));
    if (shoff && shnum == 0)
        shnum = 1;      /* extended numbering: the count is in section 0 */
    if (shoff > size || (shentsize && shnum > (size - shoff) / shentsize))
        return kinv_error(err, "%s section header table at offset 0x%llx (%llu entries of %u bytes) "
                          "runs past the end (%zu bytes)", what, (unsigned long long)shoff,
                          (unsigned long long)shnum, shentsize, size);
    return 0;
}

int kinv_cubin_entries(const uint8_t *data, size_t size, kinv_name_fn fn, void *ctx,
                       struct kinv_err *err)
{
    if (!kinv_elf_ready())
        return kinv_error(err, "libelf is unusable: %s", elf_errmsg(-1));
    if (size < EI_NIDENT || memcmp(data, ELFMAG, SELFMAG))
        return kinv_error(err, "payload is not an ELF image");
    if (data[EI_DATA] != ELFDATA2LSB || (data[EI_CLASS] != ELFCLASS64 && data[EI_CLASS] != ELFCLASS32))
        return kinv_error(err, "cubin has an unsupported ELF class or byte order");
    if (kinv_elf_check_shdrs(data, size, "cubin", err))
        return -1;
    Elf *elf = elf_memory((char *)data, size);
    if (!elf)
        return kinv_error(err, "corrupt cubin ELF: %s", elf_errmsg(-1));
    int rc = -1;
    GElf_Ehdr eh;
    if (!gelf_getehdr(elf, &eh)) {
        kinv_error(err, "corrupt cubin ELF header: %s", elf_errmsg(-1));
        goto out;
    }
    if (eh.e_machine != KINV_EM_CUDA) {
        kinv_error(err, "cubin is not a CUDA ELF (machine %u)", eh.e_machine);
        goto out;
    }
    size_t symsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) {
            kinv_error(err, "corrupt cubin section header: %s", elf_errmsg(-1));
            goto out;
        }
        if (sh.sh_type != SHT_SYMTAB)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d) {
            kinv_error(err, "corrupt cubin symbol table at offset 0x%llx: %s",
                       (unsigned long long)sh.sh_offset, elf_errmsg(-1));
            goto out;
        }
        size_t n = symsize ? d->d_size / symsize : 0;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(d, (int)i, &sym)) {
                kinv_error(err, "corrupt cubin symbol %zu: %s", i, elf_errmsg(-1));
                goto out;
            }
            if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !(sym.st_other & KINV_STO_ENTRY))
                continue;
            const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
            if (!name) {
                kinv_error(err, "cubin entry symbol %zu has a bad name offset 0x%llx", i,
                           (unsigned long long)sym.st_name);
                goto out;
            }
            size_t len = strlen(name);
            if (len == 0)
                continue;
            if (fn(ctx, name, len))
                goto out;
        }
    }
    rc = 0;
out:
    elf_end(elf);
    return rc;
}

/* ---- PTX ------------------------------------------------------------------ */

static int ptx_ident_start(int c) { return isalpha(c) || c == '_' || c == '$' || c == '%'; }
static int ptx_ident(int c) { return isalnum(c) || c == '_' || c == '$'; }

/*
 * Finds ".entry NAME" directives.  A directive after "//" on its line is a
 * comment and skipped; block comments are not tracked (the compilers that
 * make vendor PTX do not write them), so at worst a commented-out .entry
 * adds a name.  memmem keeps this at memory speed: cuBLAS carries ~1 GB of
 * PTX text.
 */
int kinv_ptx_entries(const char *text, size_t size, kinv_name_fn fn, void *ctx)
{
    const char *nul = memchr(text, 0, size);
    size_t n = nul ? (size_t)(nul - text) : size;
    size_t i = 0;
    for (;;) {
        const char *hit = memmem(text + i, n - i, ".entry", 6);
        if (!hit)
            break;
        size_t at = (size_t)(hit - text), j = at + 6;
        i = j;
        if (j >= n || !isspace((unsigned char)text[j]) || (at > 0 && ptx_ident((unsigned char)text[at - 1])))
            continue;
        size_t line = at;
        while (line > 0 && text[line - 1] != '\n')
            line--;
        int comment = 0;
        for (size_t k = line; k + 1 < at && !comment; k++)
            comment = text[k] == '/' && text[k + 1] == '/';
        if (comment)
            continue;
        while (j < n && isspace((unsigned char)text[j]))
            j++;
        size_t start = j;
        if (j < n && ptx_ident_start((unsigned char)text[j])) {
            j++;
            while (j < n && ptx_ident((unsigned char)text[j]))
                j++;
            if (j == n || text[j] == '(' || text[j] == '{' || isspace((unsigned char)text[j]))
                if (fn(ctx, text + start, j - start))
                    return -1;
        }
        i = j;
    }
    return 0;
}

/* ---- format strings ------------------------------------------------------------ */

static int ident_char(int c) { return isalnum(c) || c == '_'; }

/*
 * Parses one conversion at s[0] == '%'; returns its length and the
 * conversion character in *conv, or 0 when it is not one we accept.
 */
static size_t conversion(const char *s, size_t n, char *conv)
{
    size_t i = 1;
    while (i < n && strchr("-+ 0#", s[i]) && s[i])
        i++;
    while (i < n && isdigit((unsigned char)s[i]))
        i++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && isdigit((unsigned char)s[i]))
            i++;
    }
    while (i < n && s[i] && strchr("hlzjt", s[i]))
        i++;
    if (i < n && s[i] && strchr("sdiucxX", s[i])) {
        *conv = s[i];
        return i + 1;
    }
    return 0;
}

int kinv_pattern_check(const char *text, size_t len)
{
    if (len == 0 || memchr(text, 0, len))
        return -1;
    for (size_t i = 0; i < len;) {
        if (text[i] != '%') {
            i++;
            continue;
        }
        char conv;
        size_t k = conversion(text + i, len - i, &conv);
        if (!k)
            return -1;
        i += k;
    }
    return 0;
}

/*
 * A kernel-name template: identifier characters and conversions only,
 * starting with a letter or '_', at least one conversion, at least 4
 * literal characters before it and 8 in all (so that the pattern cannot
 * match short, generic names).
 */
static int template_like(const char *s, size_t n)
{
    if (n < 8 || n > 512 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    size_t literal = 0, prefix = 0, convs = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] == '%') {
            char conv;
            size_t k = conversion(s + i, n - i, &conv);
            if (!k)
                return 0;
            if (convs++ == 0)
                prefix = literal;
            i += k;
        } else if (ident_char((unsigned char)s[i])) {
            literal++;
            i++;
        } else {
            return 0;
        }
    }
    return convs > 0 && prefix >= 4 && literal >= 8;
}

int kinv_scan_format_strings(const uint8_t *data, size_t size, kinv_name_fn fn, void *ctx)
{
    const char *base = (const char *)data;
    size_t off = 0;
    while (off < size) {
        const char *pct = memchr(base + off, '%', size - off);
        if (!pct)
            break;
        size_t at = (size_t)(pct - base);
        /* the string around it: from after the previous NUL to the next NUL */
        size_t start = at;
        while (start > 0 && base[start - 1] != 0 && at - start < 512)
            start--;
        const char *nul = memchr(pct, 0, size - at);
        if (!nul)
            break;          /* unterminated tail: no string */
        size_t end = (size_t)(nul - base);
        if ((start == 0 || base[start - 1] == 0) && template_like(base + start, end - start))
            if (fn(ctx, base + start, end - start))
                return -1;
        off = end + 1;
    }
    return 0;
}
