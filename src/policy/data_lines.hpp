// The line format every policy data file shares (manylinux.policy,
// musllinux.policy, target profiles): one record a line, fields separated by
// blanks, '#' starts a comment that runs to the end of the line, blank lines are
// skipped. Internal to src/policy.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::policy {

struct DataLine {
    int number = 0;                   // 1-based line number in the file
    std::vector<std::string> fields;  // at least one
    std::string rest_after_first;     // the line after the first field, trimmed (free text values)
};

// Calls `visit` for every line that holds a record, in order.
void for_each_data_line(std::string_view text, const std::function<void(const DataLine&)>& visit);

}  // namespace wheelfix::policy
