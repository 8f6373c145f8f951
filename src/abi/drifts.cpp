// The drift knowledge base: parsing the "key: value" block format and the
// embedded src/abi/data/torch_drifts.txt (drifts.hpp has the contract).
#include "wheelfix/abi/drifts.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"

#include <array>
#include <fstream>
#include <sstream>

extern const char wheelfix_torch_drifts[];
extern const unsigned long wheelfix_torch_drifts_size;

namespace wheelfix::abi {

namespace {

constexpr std::uint64_t kMaxDriftsFile = 16 << 20;  // the bundled drifts file is a few KiB

using Field = std::string Drift::*;

struct Key {
    std::string_view name;
    Field field;
    bool required;
};

constexpr std::array kKeys{
    Key{"symbol", &Drift::symbol, true},     Key{"successor", &Drift::successor, true},
    Key{"library", &Drift::library, false},  Key{"since", &Drift::since, true},
    Key{"source", &Drift::source, true},     Key{"verified", &Drift::verified, false},
    Key{"note", &Drift::note, false},
};

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
    return text;
}

class DriftParser {
public:
    DriftParser(std::string_view text, const std::string& origin) : text_(text), origin_(origin) {}

    std::vector<Drift> run() {
        while (!text_.empty()) {
            const std::size_t end = text_.find('\n');
            const std::string_view line = trim(text_.substr(0, end));
            text_.remove_prefix(end == std::string_view::npos ? text_.size() : end + 1);
            ++line_number_;
            if (line.starts_with("#")) continue;
            if (line.empty()) close_block();
            else add_field(line);
        }
        close_block();
        return std::move(drifts_);
    }

private:
    [[noreturn]] void problem(const std::string& what) const {
        throw InputError(origin_, "line " + std::to_string(line_number_) + ": " + what);
    }

    void add_field(std::string_view line) {
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) problem("expected 'key: value'");
        const std::string_view name = trim(line.substr(0, colon));
        const std::string_view value = trim(line.substr(colon + 1));
        for (const Key& key : kKeys) {
            if (key.name != name) continue;
            std::string& slot = current_.*key.field;
            if (!slot.empty()) problem("'" + std::string(name) + "' given twice in one entry");
            if (value.empty()) problem("empty '" + std::string(name) + "'");
            slot = std::string(value);
            in_block_ = true;
            return;
        }
        problem("unknown key '" + std::string(name) + "'");
    }

    void close_block() {
        if (!in_block_) return;
        for (const Key& key : kKeys)
            if (key.required && (current_.*key.field).empty())
                problem("entry ending here lacks '" + std::string(key.name) + "'");
        if (!current_.symbol.starts_with("_Z") || !current_.successor.starts_with("_Z"))
            problem("symbol and successor must be mangled C++ names (_Z...)");
        drifts_.push_back(std::move(current_));
        current_ = Drift{};
        in_block_ = false;
    }

    std::string_view text_;
    const std::string& origin_;
    std::size_t line_number_ = 0;
    Drift current_;
    bool in_block_ = false;
    std::vector<Drift> drifts_;
};

}  // namespace

std::vector<Drift> parse_drifts(std::string_view text, const std::string& origin) {
    return DriftParser(text, origin).run();
}

const std::vector<Drift>& known_drifts() {
    static const std::vector<Drift> drifts =
        parse_drifts(std::string_view(wheelfix_torch_drifts, wheelfix_torch_drifts_size), "torch_drifts.txt");
    return drifts;
}

std::vector<const Drift*> drifts_for(std::string_view symbol) {
    std::vector<const Drift*> matches;
    for (const Drift& drift : known_drifts())
        if (drift.symbol == symbol) matches.push_back(&drift);
    return matches;
}

std::vector<Drift> load_drifts(const std::filesystem::path& path) {
    return parse_drifts(read_regular_file(path, kMaxDriftsFile), path.string());
}

}  // namespace wheelfix::abi
