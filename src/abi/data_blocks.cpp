// The "key: value" block reader of the abi data files (data_blocks.hpp has the contract).
#include "wheelfix/abi/data_blocks.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/text.hpp"

#include <algorithm>

namespace wheelfix::abi {

void DataBlock::require(std::size_t key, std::string_view name) const {
    if (values_.at(key).empty()) problem("entry ending here lacks '" + std::string(name) + "'");
}

void DataBlock::problem(const std::string& what) const {
    throw InputError(origin_, "line " + std::to_string(line_) + ": " + what);
}

class DataBlockReader {
public:
    DataBlockReader(const std::string& origin, std::span<const std::string_view> keys) : keys_(keys), block_(origin, keys.size()) {}

    void run(std::string_view text, const std::function<void(const DataBlock&)>& on_block) {
        while (!text.empty()) {
            const std::size_t end = text.find('\n');
            const std::string_view line = trim(text.substr(0, end));
            text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
            ++block_.line_;
            if (line.starts_with("#")) continue;
            if (line.empty()) close(on_block);
            else add_field(line);
        }
        close(on_block);
    }

private:
    void add_field(std::string_view line) {
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) block_.problem("expected 'key: value'");
        const std::string_view key = trim(line.substr(0, colon));
        const std::string_view value = trim(line.substr(colon + 1));
        const auto found = std::find(keys_.begin(), keys_.end(), key);
        if (found == keys_.end()) block_.problem("unknown key '" + std::string(key) + "'");
        std::string& slot = block_.values_[static_cast<std::size_t>(found - keys_.begin())];
        if (!slot.empty()) block_.problem("'" + std::string(key) + "' given twice in one entry");
        if (value.empty()) block_.problem("empty '" + std::string(key) + "'");
        slot = std::string(value);
    }

    void close(const std::function<void(const DataBlock&)>& on_block) {
        const auto& values = block_.values_;
        if (std::all_of(values.begin(), values.end(), [](const std::string& value) { return value.empty(); })) return;
        on_block(block_);
        std::fill(block_.values_.begin(), block_.values_.end(), std::string());
    }

    std::span<const std::string_view> keys_;
    DataBlock block_;
};

void for_each_block(std::string_view text, const std::string& origin, std::span<const std::string_view> keys,
                    const std::function<void(const DataBlock&)>& on_block) {
    DataBlockReader(origin, keys).run(text, on_block);
}

}  // namespace wheelfix::abi
