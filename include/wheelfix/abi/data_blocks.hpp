// The "key: value" block format of the abi layer's data files (torch_drifts.txt,
// torch_appended.txt): one field per line, entries separated by blank lines, lines
// starting with '#' are comments, blanks around keys and values do not count.
//
// Contract: for_each_block(text, origin, keys, on_block) calls on_block once per
// entry, in file order, with the entry's values indexed like `keys` ("" for a key
// the entry lacks). It throws InputError(origin, "line N: …") for a line without
// ':', a key not in `keys`, a key given twice in one entry or an empty value;
// DataBlock::problem and DataBlock::require throw the same way, naming the line
// that ended the entry, so callers report their own rules alike.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::abi {

class DataBlock {
public:
    DataBlock(const std::string& origin, std::size_t keys) : origin_(origin), values_(keys) {}

    const std::string& operator[](std::size_t key) const { return values_.at(key); }
    // Throws "entry ending here lacks '<name>'" when the value of `key` is empty.
    void require(std::size_t key, std::string_view name) const;
    [[noreturn]] void problem(const std::string& what) const;

private:
    friend class DataBlockReader;
    const std::string& origin_;
    std::vector<std::string> values_;
    std::size_t line_ = 0;
};

void for_each_block(std::string_view text, const std::string& origin, std::span<const std::string_view> keys,
                    const std::function<void(const DataBlock&)>& on_block);

}  // namespace wheelfix::abi
