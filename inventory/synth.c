/* synth.c - synthetic cubins, containers and host ELF files (see synth.h). */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <lz4frame.h>
#include <zstd.h>

#include "synth.h"

void kinv_buf_free(struct kinv_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static int reserve(struct kinv_buf *b, size_t n)
{
    if (b->len + n <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n)
        cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

int kinv_buf_put(struct kinv_buf *b, const void *data, size_t n)
{
    if (reserve(b, n))
        return -1;
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
    return 0;
}

int kinv_buf_zero(struct kinv_buf *b, size_t n)
{
    if (reserve(b, n))
        return -1;
    memset(b->p + b->len, 0, n);
    b->len += n;
    return 0;
}

int kinv_buf_align(struct kinv_buf *b, size_t align)
{
    size_t pad = (align - b->len % align) % align;
    return kinv_buf_zero(b, pad);
}

/* Appends s (with NUL) to a string table; returns its offset. */
static uint32_t strtab_add(struct kinv_buf *t, const char *s)
{
    uint32_t at = (uint32_t)t->len;
    kinv_buf_put(t, s, strlen(s) + 1);
    return at;
}

struct sec {
    const char *name;
    uint32_t type, link, info;
    uint64_t flags, entsize, align;
    const void *data;
    size_t size;
};

/* Lays out an ELF64 file: header, section contents, .shstrtab, section headers. */
static int write_elf(uint16_t type, uint16_t machine, uint8_t osabi, const struct sec *secs, size_t n,
                     struct kinv_buf *out)
{
    struct kinv_buf shstr = { 0 };
    uint32_t *names = calloc(n + 2, sizeof(uint32_t));
    uint64_t *offs = calloc(n + 2, sizeof(uint64_t));
    if (!names || !offs) {
        free(names);
        free(offs);
        return -1;
    }
    strtab_add(&shstr, "");
    for (size_t i = 0; i < n; i++)
        names[i] = strtab_add(&shstr, secs[i].name);
    uint32_t shstr_name = strtab_add(&shstr, ".shstrtab");

    Elf64_Ehdr eh = { 0 };
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_ident[EI_OSABI] = osabi;
    eh.e_type = type;
    eh.e_machine = machine;
    eh.e_version = EV_CURRENT;
    eh.e_ehsize = sizeof(Elf64_Ehdr);
    eh.e_shentsize = sizeof(Elf64_Shdr);
    eh.e_shnum = (uint16_t)(n + 2);
    eh.e_shstrndx = (uint16_t)(n + 1);
    out->len = 0;
    kinv_buf_put(out, &eh, sizeof(eh));
    for (size_t i = 0; i < n; i++) {
        kinv_buf_align(out, secs[i].align ? secs[i].align : 8);
        offs[i] = out->len;
        if (secs[i].type != SHT_NOBITS)
            kinv_buf_put(out, secs[i].data, secs[i].size);
    }
    offs[n] = out->len;
    kinv_buf_put(out, shstr.p, shstr.len);
    kinv_buf_align(out, 8);
    uint64_t shoff = out->len;
    Elf64_Shdr sh = { 0 };
    kinv_buf_put(out, &sh, sizeof(sh));
    for (size_t i = 0; i < n; i++) {
        memset(&sh, 0, sizeof(sh));
        sh.sh_name = names[i];
        sh.sh_type = secs[i].type;
        sh.sh_flags = secs[i].flags;
        sh.sh_offset = offs[i];
        sh.sh_size = secs[i].size;
        sh.sh_link = secs[i].link;
        sh.sh_info = secs[i].info;
        sh.sh_addralign = secs[i].align ? secs[i].align : 8;
        sh.sh_entsize = secs[i].entsize;
        kinv_buf_put(out, &sh, sizeof(sh));
    }
    memset(&sh, 0, sizeof(sh));
    sh.sh_name = shstr_name;
    sh.sh_type = SHT_STRTAB;
    sh.sh_offset = offs[n];
    sh.sh_size = shstr.len;
    sh.sh_addralign = 1;
    kinv_buf_put(out, &sh, sizeof(sh));
    int failed = out->p == NULL;
    if (!failed)
        memcpy(out->p + offsetof(Elf64_Ehdr, e_shoff), &shoff, sizeof(shoff));
    kinv_buf_free(&shstr);
    free(names);
    free(offs);
    return failed ? -1 : 0;
}

int kinv_synth_cubin(const struct kinv_synth_sym *syms, size_t n, uint16_t machine, struct kinv_buf *out)
{
    struct kinv_buf str = { 0 }, sym = { 0 };
    strtab_add(&str, "");
    Elf64_Sym s = { 0 };
    kinv_buf_put(&sym, &s, sizeof(s));
    for (size_t i = 0; i < n; i++) {
        memset(&s, 0, sizeof(s));
        s.st_name = strtab_add(&str, syms[i].name);
        s.st_info = ELF64_ST_INFO(STB_GLOBAL, syms[i].func ? STT_FUNC : STT_OBJECT);
        s.st_other = syms[i].entry ? 0x10 : 0;
        s.st_shndx = 1;
        kinv_buf_put(&sym, &s, sizeof(s));
    }
    static const uint8_t text[16] = { 0 };
    struct sec secs[] = {
        { ".text.kernel", SHT_PROGBITS, 0, 0, SHF_ALLOC | SHF_EXECINSTR, 0, 128, text, sizeof(text) },
        { ".strtab", SHT_STRTAB, 0, 0, 0, 0, 1, str.p, str.len },
        { ".symtab", SHT_SYMTAB, 2, 1, 0, sizeof(Elf64_Sym), 8, sym.p, sym.len },
    };
    int rc = write_elf(ET_EXEC, machine ? machine : 190, 0x33, secs, 3, out);
    kinv_buf_free(&str);
    kinv_buf_free(&sym);
    return rc;
}

static int compress(int how, const void *src, size_t n, struct kinv_buf *out)
{
    out->len = 0;
    switch (how) {
    case KINV_SYNTH_ZSTD: {
        size_t bound = ZSTD_compressBound(n);
        if (reserve(out, bound))
            return -1;
        size_t r = ZSTD_compress(out->p, bound, src, n, 3);
        if (ZSTD_isError(r))
            return -1;
        out->len = r;
        return 0;
    }
    case KINV_SYNTH_LZ4: {
        int bound = LZ4_compressBound((int)n);
        if (reserve(out, (size_t)bound))
            return -1;
        int r = LZ4_compress_default(src, (char *)out->p, (int)n, bound);
        if (r <= 0)
            return -1;
        out->len = (size_t)r;
        return 0;
    }
    case KINV_SYNTH_LZ4F: {
        size_t bound = LZ4F_compressFrameBound(n, NULL);
        if (reserve(out, bound))
            return -1;
        size_t r = LZ4F_compressFrame(out->p, bound, src, n, NULL);
        if (LZ4F_isError(r))
            return -1;
        out->len = r;
        return 0;
    }
    default:
        return kinv_buf_put(out, src, n);
    }
}

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

int kinv_synth_container(const struct kinv_synth_entry *e, size_t n, struct kinv_buf *out)
{
    out->len = 0;
    uint8_t head[16] = { 0 };
    put32(head, 0xBA55ED50u);
    put16(head + 4, 1);
    put16(head + 6, 16);
    kinv_buf_put(out, head, sizeof(head));
    struct kinv_buf c = { 0 };
    for (size_t i = 0; i < n; i++) {
        if (compress(e[i].compression, e[i].payload, e[i].size, &c)) {
            kinv_buf_free(&c);
            return -1;
        }
        uint32_t hsize = e[i].header_size ? e[i].header_size : 64;
        size_t padded = (c.len + 7) & ~(size_t)7;
        uint8_t *h = calloc(1, hsize);
        if (!h) {
            kinv_buf_free(&c);
            return -1;
        }
        put16(h, e[i].kind);
        put16(h + 2, 0x0101);
        put32(h + 4, hsize);
        put64(h + 8, padded);
        uint64_t flags = e[i].flags | 0x11;
        if (e[i].compression == KINV_SYNTH_ZSTD)
            flags |= 0x8000;
        else if (e[i].compression)
            flags |= 0x2000;
        if (e[i].compression) {
            put32(h + 0x10, (uint32_t)c.len);
            put64(h + 0x38, e[i].size);
        }
        put32(h + 0x1c, e[i].arch);
        put64(h + 0x28, flags);
        kinv_buf_put(out, h, hsize);
        kinv_buf_put(out, c.p, c.len);
        kinv_buf_zero(out, padded - c.len);
        free(h);
    }
    kinv_buf_free(&c);
    if (!out->p)
        return -1;
    put64(out->p + 8, out->len - 16);
    return 0;
}

int kinv_synth_host(const char *soname, const struct kinv_synth_section *s, size_t n,
                    struct kinv_buf *out)
{
    struct sec *secs = calloc(n + 2, sizeof(*secs));
    if (!secs)
        return -1;
    for (size_t i = 0; i < n; i++)
        secs[i] = (struct sec){ s[i].name, s[i].type, 0, 0, s[i].flags, 0, 8, s[i].data, s[i].size };
    size_t m = n;
    struct kinv_buf dynstr = { 0 }, dyn = { 0 };
    if (soname) {
        strtab_add(&dynstr, "");
        uint32_t off = strtab_add(&dynstr, soname);
        Elf64_Dyn d[2] = { { DT_SONAME, { off } }, { DT_NULL, { 0 } } };
        kinv_buf_put(&dyn, d, sizeof(d));
        secs[m++] = (struct sec){ ".dynstr", SHT_STRTAB, 0, 0, SHF_ALLOC, 0, 1, dynstr.p, dynstr.len };
        /* secs[k] becomes section k + 1: .dynstr, secs[m - 1], is section m */
        uint32_t dynstr_index = (uint32_t)m;
        secs[m++] = (struct sec){ ".dynamic", SHT_DYNAMIC, dynstr_index, 0, SHF_ALLOC | SHF_WRITE,
                                  sizeof(Elf64_Dyn), 8, dyn.p, dyn.len };
    }
    int rc = write_elf(ET_DYN, EM_X86_64, 0, secs, m, out);
    kinv_buf_free(&dynstr);
    kinv_buf_free(&dyn);
    free(secs);
    return rc;
}

/* ---- the reference library -------------------------------------------------- */

static int cubin_of(struct kinv_buf *out, const char *const *entries, size_t n)
{
    struct kinv_synth_sym syms[16];
    size_t k = 0;
    for (size_t i = 0; i < n && k < 14; i++)
        syms[k++] = (struct kinv_synth_sym){ entries[i], 1, 1 };
    /* a device function and a variable flagged like an entry: neither is a kernel */
    syms[k++] = (struct kinv_synth_sym){ "device_helper_not_a_kernel", 1, 0 };
    syms[k++] = (struct kinv_synth_sym){ "variable_not_a_kernel", 0, 1 };
    return kinv_synth_cubin(syms, k, 0, out);
}

int kinv_synth_reference(const char *soname, int variant, struct kinv_buf *out)
{
    struct kinv_buf c1 = { 0 }, c2 = { 0 }, c3 = { 0 }, c4 = { 0 };
    struct kinv_buf fat = { 0 }, fat2 = { 0 }, ro = { 0 }, text = { 0 }, emb = { 0 };
    static const char *const a[] = { "k_alpha", "k_beta" };
    static const char *const b0[] = { "k_alpha", "k_gamma" };
    static const char *const b1[] = { "k_alpha", "k_gamma_v2" };
    static const char *const f[] = { "k_family" };
    static const char *const g[] = { "k_embedded" };
    static const char ptx[] =
        "//\n// Generated by a test\n//\n.version 8.0\n.target sm_90\n"
        ".visible .entry k_delta(\n\t.param .u64 p\n)\n{\n\tret;\n}\n"
        "// .visible .entry k_commented_out(\n"
        ".func k_device_function()\n{\n\tret;\n}\n"
        ".weak .entry k_epsilon (\n)\n{\n\tret;\n}\n";
    int rc = -1;
    if (cubin_of(&c1, a, 2) || cubin_of(&c2, variant ? b1 : b0, 2) || cubin_of(&c3, f, 1) ||
        cubin_of(&c4, g, 1))
        goto out;
    struct kinv_synth_entry e1[] = {
        { 2, 80, 0, KINV_SYNTH_PLAIN, 64, c1.p, c1.len },
        { 2, 90, 0x100000, KINV_SYNTH_ZSTD, 112, c2.p, c2.len },
        { 1, 90, 0, KINV_SYNTH_LZ4, 80, ptx, sizeof(ptx) },
        { 8, 90, 0, KINV_SYNTH_PLAIN, 64, "ltoir", 5 },
    };
    struct kinv_synth_entry e2[] = { { 2, 100, 0x200000, KINV_SYNTH_LZ4F, 64, c3.p, c3.len } };
    struct kinv_synth_entry e3[] = { { 2, 75, 0, KINV_SYNTH_ZSTD, 64, c4.p, c4.len } };
    if (kinv_synth_container(e1, 4, &fat) || kinv_synth_container(e2, 1, &fat2) ||
        kinv_synth_container(e3, 1, &emb))
        goto out;
    /* .nv_fatbin: two containers with alignment padding between them */
    kinv_buf_align(&fat, 8);
    kinv_buf_zero(&fat, 8);
    kinv_buf_put(&fat, fat2.p, fat2.len);
    /* .rodata: strings, a kernel-name format string, and an embedded container
       at an odd offset */
    static const char strs[] = "\0junk\0error %s at %d\0nvjet_sm%d_%s_%dx%d_%c\0%d\0ab%dcdefgh\0";
    kinv_buf_put(&ro, strs, sizeof(strs));
    kinv_buf_zero(&ro, 3);
    kinv_buf_put(&ro, emb.p, emb.len);
    kinv_buf_zero(&ro, 5);
    /* .text: the magic followed by garbage is no container */
    static const uint8_t junk[] = { 0x50, 0xed, 0x55, 0xba, 0x01, 0x00, 0x10, 0x00,
                                    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x90, 0x90 };
    kinv_buf_zero(&text, 32);
    kinv_buf_put(&text, junk, sizeof(junk));
    struct kinv_synth_section secs[] = {
        { ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, text.p, text.len },
        { ".rodata", SHT_PROGBITS, SHF_ALLOC, ro.p, ro.len },
        { ".nv_fatbin", SHT_PROGBITS, SHF_ALLOC, fat.p, fat.len },
        { ".bss", SHT_NOBITS, SHF_ALLOC | SHF_WRITE, NULL, 4096 },
    };
    rc = kinv_synth_host(soname, secs, 4, out);
out:
    kinv_buf_free(&c1);
    kinv_buf_free(&c2);
    kinv_buf_free(&c3);
    kinv_buf_free(&c4);
    kinv_buf_free(&fat);
    kinv_buf_free(&fat2);
    kinv_buf_free(&ro);
    kinv_buf_free(&text);
    kinv_buf_free(&emb);
    return rc;
}
