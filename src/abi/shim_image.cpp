// The ELF image of a shim library, written by hand (see shim_internal.hpp).
//
// Layout, in file order (offsets packed; each segment's addresses start on a fresh
// 64 KiB page with the offset's residue, as linkers do for max-page-size 0x10000):
//   PT_LOAD R    ELF header, program headers, .gnu.hash, .hash, .dynsym, .dynstr,
//                .gnu.version, .gnu.version_d, .rela.dyn, .rodata (stub messages)
//   PT_LOAD R+X  .text (one 16-byte aligned function per symbol)
//   PT_LOAD RW   .dynamic, .got (one slot per successor; PT_GNU_RELRO covers both)
//   unmapped     .shstrtab, section headers
// .dynsym holds the null symbol, the undefined successors (unversioned, version
// index 1), then the defined functions in GNU-hash bucket order (DT_GNU_HASH needs
// the hashed symbols last, grouped by bucket), all carrying version index 2 — the
// torch node of .gnu.version_d (index 1 is the base node, named by the SONAME).
// .hash (SysV) covers every symbol too, for loaders and tools that only read it.
#include "shim_internal.hpp"

#include "wheelfix/elf/elf_file.hpp"

#include <elf.h>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace wheelfix::abi::shim_detail {

namespace {

using elf::align_up;
constexpr std::uint64_t kFunctionAlign = 16;
constexpr std::uint16_t kProgramHeaders = 6;
constexpr std::uint16_t kTorchVersionIndex = 2;

using elf::gnu_hash;
using elf::sysv_hash;

// A string table holding each string once; offset 0 is the empty string.
class StringTable {
public:
    std::uint32_t add(const std::string& text) {
        auto [it, inserted] = offsets_.try_emplace(text, static_cast<std::uint32_t>(bytes_.size()));
        if (inserted) {
            bytes_.insert(bytes_.end(), text.begin(), text.end());
            bytes_.push_back(0);
        }
        return it->second;
    }
    std::uint32_t at(const std::string& text) const { return offsets_.at(text); }
    const std::vector<std::uint8_t>& bytes() const { return bytes_; }

private:
    std::vector<std::uint8_t> bytes_{0};
    std::map<std::string, std::uint32_t> offsets_{{"", 0}};
};

// .dynsym order: null, undefined successors (sorted), defined functions by bucket.
struct SymbolOrder {
    std::vector<std::string> undefined;
    std::vector<std::size_t> defined;  // indices into plan.functions
    std::uint32_t buckets = 1;

    std::uint32_t first_defined() const { return static_cast<std::uint32_t>(1 + undefined.size()); }
    std::uint32_t count() const { return first_defined() + static_cast<std::uint32_t>(defined.size()); }
};

SymbolOrder order_symbols(const ImagePlan& plan) {
    SymbolOrder order;
    for (const auto& function : plan.functions)
        if (function.forwarder) order.undefined.push_back(function.target);
    std::sort(order.undefined.begin(), order.undefined.end());
    order.undefined.erase(std::unique(order.undefined.begin(), order.undefined.end()), order.undefined.end());
    order.buckets = static_cast<std::uint32_t>(std::max<std::size_t>(1, plan.functions.size()));
    for (std::size_t i = 0; i < plan.functions.size(); ++i) order.defined.push_back(i);
    auto bucket = [&](std::size_t i) { return gnu_hash(plan.functions[i].name) % order.buckets; };
    std::stable_sort(order.defined.begin(), order.defined.end(),
                     [&](std::size_t a, std::size_t b) { return bucket(a) < bucket(b); });
    return order;
}

std::string_view symbol_name(const ImagePlan& plan, const SymbolOrder& order, std::uint32_t index) {
    if (index < order.first_defined()) return order.undefined[index - 1];
    return plan.functions[order.defined[index - order.first_defined()]].name;
}

StringTable dynamic_strings(const ImagePlan& plan, const SymbolOrder& order) {
    StringTable strings;
    for (const auto& needed : plan.needed) strings.add(needed);
    strings.add(plan.soname);
    if (!plan.runpath.empty()) strings.add(plan.runpath);
    strings.add(plan.version_node);
    for (const auto& name : order.undefined) strings.add(name);
    for (const auto& function : plan.functions) strings.add(function.name);
    return strings;
}

// One section: its header fields and, once filled, its bytes.
struct Section {
    std::string name;
    std::uint32_t type = SHT_PROGBITS;
    std::uint64_t flags = 0;
    std::uint64_t align = 1;
    std::uint64_t entsize = 0;
    std::string link;  // name of the linked section
    std::uint32_t info = 0;
    std::uint64_t size = 0;
    std::uint64_t offset = 0;
    std::uint64_t addr = 0;
    bool starts_segment = false;
    std::vector<std::uint8_t> bytes;
};

class Sections {
public:
    Section& add(Section section) { return list_.emplace_back(std::move(section)); }
    Section* find(std::string_view name) {
        for (auto& section : list_)
            if (section.name == name) return &section;
        return nullptr;
    }
    Section& get(std::string_view name) {
        if (auto* section = find(name)) return *section;
        throw std::logic_error("shim: no section " + std::string(name));
    }
    std::uint32_t index(std::string_view name) const {
        for (std::size_t i = 0; i < list_.size(); ++i)
            if (list_[i].name == name) return static_cast<std::uint32_t>(i + 1);
        return 0;
    }
    std::vector<Section>& list() { return list_; }

private:
    std::vector<Section> list_;
};

// Bloom filter words: a power of two with about 8 bits per symbol (2 set per symbol).
std::uint32_t bloom_words(std::size_t symbols) {
    std::uint32_t words = 1;
    while (words * 8 < symbols) words *= 2;
    return words;
}

std::vector<std::uint8_t> gnu_hash_table(const ImagePlan& plan, const SymbolOrder& order) {
    const std::uint32_t words = bloom_words(order.defined.size());
    const std::uint32_t shift = 6;
    std::vector<std::uint8_t> out;
    put32(out, order.buckets);
    put32(out, order.first_defined());
    put32(out, words);
    put32(out, shift);
    std::vector<std::uint64_t> bloom(words, 0);
    std::vector<std::uint32_t> first(order.buckets, 0), chain;
    for (std::uint32_t index = order.first_defined(); index < order.count(); ++index) {
        auto h = gnu_hash(symbol_name(plan, order, index));
        bloom[(h / 64) & (words - 1)] |= (1ull << (h % 64)) | (1ull << ((h >> shift) % 64));
        if (first[h % order.buckets] == 0) first[h % order.buckets] = index;
        bool last = index + 1 == order.count() ||
                    gnu_hash(symbol_name(plan, order, index + 1)) % order.buckets != h % order.buckets;
        chain.push_back(last ? (h | 1u) : (h & ~1u));
    }
    for (auto word : bloom) put64(out, word);
    for (auto value : first) put32(out, value);
    for (auto value : chain) put32(out, value);
    return out;
}

std::vector<std::uint8_t> sysv_hash_table(const ImagePlan& plan, const SymbolOrder& order) {
    const std::uint32_t buckets = std::max<std::uint32_t>(1, order.count() / 2);
    std::vector<std::uint32_t> bucket(buckets, 0), chain(order.count(), 0);
    // Insert from the end so each chain lists symbols in table order.
    for (std::uint32_t index = order.count() - 1; index >= 1; --index) {
        auto b = sysv_hash(symbol_name(plan, order, index)) % buckets;
        chain[index] = bucket[b];
        bucket[b] = index;
    }
    std::vector<std::uint8_t> out;
    put32(out, buckets);
    put32(out, order.count());
    for (auto value : bucket) put32(out, value);
    for (auto value : chain) put32(out, value);
    return out;
}

std::vector<std::uint8_t> version_symbols(const SymbolOrder& order) {
    std::vector<std::uint8_t> out;
    put16(out, VER_NDX_LOCAL);
    for (std::size_t i = 0; i < order.undefined.size(); ++i) put16(out, VER_NDX_GLOBAL);
    for (std::size_t i = 0; i < order.defined.size(); ++i) put16(out, kTorchVersionIndex);
    return out;
}

void version_definition(std::vector<std::uint8_t>& out, std::uint16_t flags, std::uint16_t index,
                        const std::string& name, std::uint32_t name_offset, bool last) {
    put16(out, VER_DEF_CURRENT);
    put16(out, flags);
    put16(out, index);
    put16(out, 1);              // vd_cnt: the name only, no parents
    put32(out, sysv_hash(name));
    put32(out, 20);             // vd_aux: right after this entry
    put32(out, last ? 0 : 28);  // vd_next
    put32(out, name_offset);    // Verdaux.vda_name
    put32(out, 0);              // vda_next
}

std::vector<std::uint8_t> version_definitions(const ImagePlan& plan, const StringTable& strings) {
    std::vector<std::uint8_t> out;
    version_definition(out, VER_FLG_BASE, VER_NDX_GLOBAL, plan.soname, strings.at(plan.soname), false);
    version_definition(out, 0, kTorchVersionIndex, plan.version_node, strings.at(plan.version_node), true);
    return out;
}

std::string stub_messages(const ImagePlan& plan) {
    std::string text;
    for (const auto& function : plan.functions)
        if (!function.forwarder) text += function.message + '\0';
    return text;
}

// Where the code of each function goes, relative to the start of .text.
struct TextLayout {
    std::vector<std::uint64_t> offsets;  // per plan.functions
    std::vector<std::uint64_t> sizes;
    std::uint64_t size = 0;
};

TextLayout text_layout(const ImagePlan& plan, const CodeModel& code) {
    TextLayout layout;
    for (const auto& function : plan.functions) {
        layout.size = align_up(layout.size, kFunctionAlign);
        layout.offsets.push_back(layout.size);
        auto size = function.forwarder ? code.forwarder_size(function.set) : code.stub_size;
        layout.sizes.push_back(size);
        layout.size += size;
    }
    return layout;
}

struct Addresses {
    std::uint64_t gnu_hash = 0, hash = 0, dynsym = 0, dynstr = 0, dynstr_size = 0;
    std::uint64_t rela = 0, rela_size = 0, versym = 0, verdef = 0;
};

std::vector<std::pair<std::int64_t, std::uint64_t>> dynamic_entries(const ImagePlan& plan, const StringTable& strings,
                                                                    const Addresses& at) {
    std::vector<std::pair<std::int64_t, std::uint64_t>> entries;
    for (const auto& needed : plan.needed) entries.emplace_back(DT_NEEDED, strings.at(needed));
    entries.emplace_back(DT_SONAME, strings.at(plan.soname));
    if (!plan.runpath.empty()) entries.emplace_back(DT_RUNPATH, strings.at(plan.runpath));
    entries.emplace_back(DT_GNU_HASH, at.gnu_hash);
    entries.emplace_back(DT_HASH, at.hash);
    entries.emplace_back(DT_STRTAB, at.dynstr);
    entries.emplace_back(DT_SYMTAB, at.dynsym);
    entries.emplace_back(DT_STRSZ, at.dynstr_size);
    entries.emplace_back(DT_SYMENT, sizeof(Elf64_Sym));
    if (at.rela_size != 0) {
        entries.emplace_back(DT_RELA, at.rela);
        entries.emplace_back(DT_RELASZ, at.rela_size);
        entries.emplace_back(DT_RELAENT, sizeof(Elf64_Rela));
    }
    entries.emplace_back(DT_VERSYM, at.versym);
    entries.emplace_back(DT_VERDEF, at.verdef);
    entries.emplace_back(DT_VERDEFNUM, 2);
    entries.emplace_back(DT_NULL, 0);
    return entries;
}

Section section(std::string name, std::uint32_t type, std::uint64_t flags, std::uint64_t align,
                std::uint64_t entsize = 0, std::string link = {}, std::uint32_t info = 0) {
    Section out;
    out.name = std::move(name);
    out.type = type;
    out.flags = flags;
    out.align = align;
    out.entsize = entsize;
    out.link = std::move(link);
    out.info = info;
    return out;
}

Section with_bytes(Section out, std::vector<std::uint8_t> bytes) {
    out.bytes = std::move(bytes);
    return out;
}

Section with_size(Section out, std::uint64_t size, bool starts_segment = false) {
    out.size = size;
    out.starts_segment = starts_segment;
    return out;
}

// The section skeletons with their sizes; contents are filled after layout.
Sections section_skeletons(const ImagePlan& plan, const SymbolOrder& order, const StringTable& strings,
                           const TextLayout& text) {
    Sections s;
    const std::uint64_t a = SHF_ALLOC, ax = SHF_ALLOC | SHF_EXECINSTR, wa = SHF_ALLOC | SHF_WRITE;
    s.add(with_bytes(section(".gnu.hash", SHT_GNU_HASH, a, 8, 0, ".dynsym"), gnu_hash_table(plan, order)));
    s.add(with_bytes(section(".hash", SHT_HASH, a, 4, 4, ".dynsym"), sysv_hash_table(plan, order)));
    s.add(with_size(section(".dynsym", SHT_DYNSYM, a, 8, sizeof(Elf64_Sym), ".dynstr", 1),
                    order.count() * sizeof(Elf64_Sym)));
    s.add(with_bytes(section(".dynstr", SHT_STRTAB, a, 1), strings.bytes()));
    s.add(with_bytes(section(".gnu.version", SHT_GNU_versym, a, 2, 2, ".dynsym"), version_symbols(order)));
    s.add(with_bytes(section(".gnu.version_d", SHT_GNU_verdef, a, 8, 0, ".dynstr", 2),
                     version_definitions(plan, strings)));
    if (!order.undefined.empty())
        s.add(with_size(section(".rela.dyn", SHT_RELA, a, 8, sizeof(Elf64_Rela), ".dynsym"),
                        order.undefined.size() * sizeof(Elf64_Rela)));
    auto messages = stub_messages(plan);
    if (!messages.empty())
        s.add(with_bytes(section(".rodata", SHT_PROGBITS, a, 1), {messages.begin(), messages.end()}));
    s.add(with_size(section(".text", SHT_PROGBITS, ax, kFunctionAlign), text.size, true));
    Addresses probe;  // only the presence of relocations matters for the count
    probe.rela_size = order.undefined.size() * sizeof(Elf64_Rela);
    auto dynamic_count = dynamic_entries(plan, strings, probe).size();
    s.add(with_size(section(".dynamic", SHT_DYNAMIC, wa, 8, sizeof(Elf64_Dyn), ".dynstr"),
                    dynamic_count * sizeof(Elf64_Dyn), true));
    if (!order.undefined.empty())
        s.add(with_size(section(".got", SHT_PROGBITS, wa, 8, 8), order.undefined.size() * 8));
    return s;
}

StringTable section_names(Sections& sections) {
    StringTable names;
    for (auto& section : sections.list()) names.add(section.name);
    names.add(".shstrtab");
    return names;
}

// Assigns offsets and addresses; returns the end of the allocated part of the file.
std::uint64_t assign_layout(Sections& sections, std::uint64_t header_end) {
    std::uint64_t offset = header_end, addr = header_end;
    for (auto& section : sections.list()) {
        if (section.size == 0) section.size = section.bytes.size();
        offset = align_up(offset, section.align);
        if (section.starts_segment)
            addr = align_up(addr, elf::kLargestPageSize) + offset % elf::kLargestPageSize;
        else addr = align_up(addr, section.align);
        section.offset = offset;
        section.addr = addr;
        offset += section.size;
        addr += section.size;
    }
    return offset;
}

void write_symbol(std::vector<std::uint8_t>& out, std::uint32_t name, unsigned char info, std::uint16_t shndx,
                  std::uint64_t value, std::uint64_t size) {
    put32(out, name);
    out.push_back(info);
    out.push_back(STV_DEFAULT);
    put16(out, shndx);
    put64(out, value);
    put64(out, size);
}

void fill_symbols(Sections& s, const ImagePlan& plan, const SymbolOrder& order, const StringTable& strings,
                  const TextLayout& text) {
    std::vector<std::uint8_t> out;
    write_symbol(out, 0, 0, SHN_UNDEF, 0, 0);
    for (const auto& name : order.undefined)
        write_symbol(out, strings.at(name), ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), SHN_UNDEF, 0, 0);
    auto text_index = static_cast<std::uint16_t>(s.index(".text"));
    auto text_addr = s.get(".text").addr;
    for (auto i : order.defined)
        write_symbol(out, strings.at(plan.functions[i].name), ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), text_index,
                     text_addr + text.offsets[i], text.sizes[i]);
    s.get(".dynsym").bytes = std::move(out);
}

std::uint64_t got_slot(Sections& s, const SymbolOrder& order, const std::string& target) {
    auto position = std::lower_bound(order.undefined.begin(), order.undefined.end(), target) - order.undefined.begin();
    return s.get(".got").addr + 8 * static_cast<std::uint64_t>(position);
}

void fill_relocations(Sections& s, const SymbolOrder& order, const CodeModel& code) {
    auto* rela = s.find(".rela.dyn");
    if (!rela) return;
    for (std::uint32_t i = 0; i < order.undefined.size(); ++i) {
        put64(rela->bytes, got_slot(s, order, order.undefined[i]));
        put64(rela->bytes, ELF64_R_INFO(static_cast<std::uint64_t>(i + 1), code.glob_dat));
        put64(rela->bytes, 0);
    }
    s.get(".got").bytes.assign(order.undefined.size() * 8, 0);
}

void fill_text(Sections& s, const ImagePlan& plan, const SymbolOrder& order, const TextLayout& layout,
               const CodeModel& code) {
    auto& text = s.get(".text");
    std::uint64_t message = s.find(".rodata") ? s.get(".rodata").addr : 0;
    for (std::size_t i = 0; i < plan.functions.size(); ++i) {
        const auto& function = plan.functions[i];
        text.bytes.resize(layout.offsets[i], code.padding);
        auto at = text.addr + layout.offsets[i];
        if (function.forwarder) {
            code.emit_forwarder(text.bytes, at, got_slot(s, order, function.target), function.set);
        } else {
            code.emit_stub(text.bytes, at, message, static_cast<std::uint32_t>(function.message.size()));
            message += function.message.size() + 1;
        }
        if (text.bytes.size() != layout.offsets[i] + layout.sizes[i])
            throw std::logic_error("shim: emitted code size differs from its layout");
    }
}

void fill_dynamic(Sections& s, const ImagePlan& plan, const StringTable& strings) {
    Addresses at;
    at.gnu_hash = s.get(".gnu.hash").addr;
    at.hash = s.get(".hash").addr;
    at.dynsym = s.get(".dynsym").addr;
    at.dynstr = s.get(".dynstr").addr;
    at.dynstr_size = s.get(".dynstr").size;
    if (auto* rela = s.find(".rela.dyn")) {
        at.rela = rela->addr;
        at.rela_size = rela->size;
    }
    at.versym = s.get(".gnu.version").addr;
    at.verdef = s.get(".gnu.version_d").addr;
    auto& dynamic = s.get(".dynamic");
    for (const auto& [tag, value] : dynamic_entries(plan, strings, at)) {
        put64(dynamic.bytes, static_cast<std::uint64_t>(tag));
        put64(dynamic.bytes, value);
    }
}

void write_elf_header(std::vector<std::uint8_t>& out, const CodeModel& code, std::uint64_t section_headers,
                      std::uint16_t section_count) {
    const std::uint8_t ident[EI_NIDENT] = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT,
                                           ELFOSABI_SYSV};
    for (auto byte : ident) out.push_back(byte);
    put16(out, ET_DYN);
    put16(out, code.e_machine);
    put32(out, EV_CURRENT);
    put64(out, 0);  // e_entry
    put64(out, sizeof(Elf64_Ehdr));
    put64(out, section_headers);
    put32(out, 0);  // e_flags
    put16(out, sizeof(Elf64_Ehdr));
    put16(out, sizeof(Elf64_Phdr));
    put16(out, kProgramHeaders);
    put16(out, sizeof(Elf64_Shdr));
    put16(out, section_count);
    put16(out, static_cast<std::uint16_t>(section_count - 1));  // .shstrtab is last
}

void write_program_header(std::vector<std::uint8_t>& out, std::uint32_t type, std::uint32_t flags,
                          std::uint64_t offset, std::uint64_t addr, std::uint64_t size, std::uint64_t align) {
    put32(out, type);
    put32(out, flags);
    put64(out, offset);
    put64(out, addr);
    put64(out, addr);
    put64(out, size);
    put64(out, size);
    put64(out, align);
}

// The first segment ends where the last section before .text ends.
std::uint64_t first_segment_end(Sections& s) {
    std::uint64_t end = 0;
    for (auto& section : s.list()) {
        if (section.name == ".text") break;
        end = section.offset + section.size;
    }
    return end;
}

void write_program_headers(std::vector<std::uint8_t>& out, Sections& s) {
    auto& text = s.get(".text");
    auto& dynamic = s.get(".dynamic");
    auto& last = s.list().back();  // .got, or .dynamic when there is none
    auto rw_size = last.addr + last.size - dynamic.addr;
    write_program_header(out, PT_LOAD, PF_R, 0, 0, first_segment_end(s), elf::kLargestPageSize);
    write_program_header(out, PT_LOAD, PF_R | PF_X, text.offset, text.addr, text.size, elf::kLargestPageSize);
    write_program_header(out, PT_LOAD, PF_R | PF_W, dynamic.offset, dynamic.addr, rw_size, elf::kLargestPageSize);
    write_program_header(out, PT_DYNAMIC, PF_R | PF_W, dynamic.offset, dynamic.addr, dynamic.size, 8);
    write_program_header(out, PT_GNU_RELRO, PF_R, dynamic.offset, dynamic.addr, rw_size, 1);
    write_program_header(out, PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 16);
}

void write_section_header(std::vector<std::uint8_t>& out, const Section& section, std::uint32_t name,
                          std::uint32_t link) {
    put32(out, name);
    put32(out, section.type);
    put64(out, section.flags);
    put64(out, section.addr);
    put64(out, section.offset);
    put64(out, section.size);
    put32(out, link);
    put32(out, section.info);
    put64(out, section.align);
    put64(out, section.entsize);
}

}  // namespace

std::vector<std::uint8_t> write_image(const ImagePlan& plan, const CodeModel& code) {
    auto order = order_symbols(plan);
    auto strings = dynamic_strings(plan, order);
    auto text = text_layout(plan, code);
    auto sections = section_skeletons(plan, order, strings, text);
    auto names = section_names(sections);
    auto allocated_end = assign_layout(sections, sizeof(Elf64_Ehdr) + kProgramHeaders * sizeof(Elf64_Phdr));

    fill_symbols(sections, plan, order, strings, text);
    fill_relocations(sections, order, code);
    fill_text(sections, plan, order, text, code);
    fill_dynamic(sections, plan, strings);

    auto shstrtab = with_bytes(section(".shstrtab", SHT_STRTAB, 0, 1), names.bytes());
    shstrtab.offset = allocated_end;
    shstrtab.size = shstrtab.bytes.size();
    auto section_headers = align_up(shstrtab.offset + shstrtab.size, 8);
    auto section_count = static_cast<std::uint16_t>(sections.list().size() + 2);

    std::vector<std::uint8_t> out;
    write_elf_header(out, code, section_headers, section_count);
    write_program_headers(out, sections);
    for (const auto& section : sections.list()) {
        if (section.bytes.size() != section.size) throw std::logic_error("shim: section " + section.name + " size");
        out.resize(section.offset, 0);
        out.insert(out.end(), section.bytes.begin(), section.bytes.end());
    }
    out.resize(shstrtab.offset, 0);
    out.insert(out.end(), shstrtab.bytes.begin(), shstrtab.bytes.end());
    out.resize(section_headers, 0);
    out.resize(out.size() + sizeof(Elf64_Shdr), 0);  // the null section
    for (const auto& section : sections.list())
        write_section_header(out, section, names.at(section.name), sections.index(section.link));
    write_section_header(out, shstrtab, names.at(".shstrtab"), 0);
    return out;
}

}  // namespace wheelfix::abi::shim_detail
