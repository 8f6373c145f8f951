// elf_edit IN OUT OPTION...: the ELF editor (elf/editor.hpp) on one file, for tests.
//
// Contract: reads IN, builds one EditRequest from the options, writes
// apply_edits(IN, plan.edits) to OUT (a plain copy when nothing changes) and prints
// plan.changes, one per line, on stdout; on stderr a summary line
// "size BEFORE -> AFTER, N edits, grew yes|no". Options (repeatable where it makes
// sense, applied as one request):
//   --set-rpath X  --add-rpath X  --remove-rpath X  --drop-absolute
//   --force-rpath  --force-runpath
//   --add-needed X  --remove-needed X  --replace-needed OLD=NEW  --set-soname X
//   --strip
// Exit status 0 on success, 2 with a one-line message on stderr for a usage,
// parse or edit error.
#include <wheelfix/elf/editor.hpp>
#include <wheelfix/elf/elf_file.hpp>
#include <wheelfix/util/byte_edit.hpp>

#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using wheelfix::elf::EditRequest;
using wheelfix::elf::SearchPathKind;

std::vector<std::uint8_t> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    in.seekg(0, std::ios::beg);
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
    if (!in.read(reinterpret_cast<char*>(bytes.data()), size))
        throw std::runtime_error("cannot read " + path);
    return bytes;
}

void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out.write(reinterpret_cast<const char*>(bytes.data()),
                   static_cast<std::streamsize>(bytes.size())))
        throw std::runtime_error("cannot write " + path);
}

std::pair<std::string, std::string> split_pair(const std::string& value) {
    const std::size_t equals = value.find('=');
    if (equals == std::string::npos)
        throw std::runtime_error("--replace-needed wants OLD=NEW, got " + value);
    return {value.substr(0, equals), value.substr(equals + 1)};
}

// Applies one option; `value` is the next argument for options that take one.
bool apply_option(EditRequest& request, const std::string& option, const char* value) {
    if (option == "--drop-absolute") return request.drop_absolute = true, false;
    if (option == "--strip") return request.strip_symbols = true, false;
    if (option == "--force-rpath") return request.force_kind = SearchPathKind::rpath, false;
    if (option == "--force-runpath") return request.force_kind = SearchPathKind::runpath, false;
    if (value == nullptr) throw std::runtime_error("option " + option + " needs a value or is unknown");
    if (option == "--set-rpath")
        request.set_search_path = value;
    else if (option == "--add-rpath")
        request.add_search_path.emplace_back(value);
    else if (option == "--remove-rpath")
        request.remove_search_path.emplace_back(value);
    else if (option == "--add-needed")
        request.add_needed.emplace_back(value);
    else if (option == "--remove-needed")
        request.remove_needed.emplace_back(value);
    else if (option == "--replace-needed")
        request.replace_needed.push_back(split_pair(value));
    else if (option == "--set-soname")
        request.set_soname = value;
    else
        throw std::runtime_error("unknown option " + option);
    return true;
}

EditRequest parse_request(int argc, char** argv) {
    EditRequest request;
    for (int i = 3; i < argc; ++i)
        if (apply_option(request, argv[i], i + 1 < argc ? argv[i + 1] : nullptr)) ++i;
    return request;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: elf_edit IN OUT [--set-rpath X | --add-needed X | --replace-needed A=B | "
                     "--set-soname X | --force-rpath | --force-runpath ...]\n";
        return 2;
    }
    try {
        const EditRequest request = parse_request(argc, argv);
        const std::vector<std::uint8_t> input = read_file(argv[1]);
        const auto elf = wheelfix::elf::ElfFile::parse(input);
        const wheelfix::elf::EditPlan plan = wheelfix::elf::plan_edits(elf, request);
        if (const std::string problem = wheelfix::edits_problem(plan.edits, input.size());
            !problem.empty())
            throw std::logic_error("invalid edits: " + problem);
        write_file(argv[2], wheelfix::apply_edits(input, plan.edits));
        for (const std::string& change : plan.changes) std::cout << change << '\n';
        std::cerr << "size " << input.size() << " -> " << plan.new_size << ", " << plan.edits.size()
                  << " edits, grew " << (plan.grew ? "yes" : "no") << '\n';
    } catch (const std::exception& error) {
        std::cerr << "elf_edit: " << argv[1] << ": " << error.what() << '\n';
        return 2;
    }
    return 0;
}
