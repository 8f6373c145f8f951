// PEP 440 versions, including local version labels.
//
// Contract: Version::parse() accepts everything PEP 440 calls valid (epochs,
// pre/post/dev releases with their alternative spellings, local labels) and
// throws InputError("", "invalid PEP 440 version '...'") otherwise. normalized()
// gives the canonical spelling ("1.0-RC1" -> "1.0rc1", "0.3.21+CU130" ->
// "0.3.21+cu130"); operator<=> orders as PEP 440 does (local labels compared
// segment by segment, numbers above strings). public_part() is the version
// without its local label; local_segments() the label split on '.', '-' or '_'.
//
// SpecifierSet is a PEP 440 version specifier set (">=2.9,<2.10", "==2.9.*",
// "~=2.6", "!=2.9.0"): clauses joined by ',' (all must hold). parse() throws
// InputError("", …) on anything else; try_parse() gives nullopt. contains() matches a
// version's public part (the local label is ignored, as pip does for a requirement
// without one). intersect() is both sets at once, without clauses another already
// implies (">=2.10" beside ">=2.4" keeps ">=2.10"; "==2.9.1" beside ">=2.9,<2.10"
// keeps "==2.9.1"); nullopt when their bounds cannot meet. An empty set is "any
// version"; text() is the clauses joined by ','.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::wheel {

class Version {
public:
    static Version parse(std::string_view text);
    static std::optional<Version> try_parse(std::string_view text);

    const std::string& original() const { return original_; }
    std::string normalized() const;
    std::string public_part() const;  // normalized, without "+local"
    const std::vector<std::string>& local_segments() const { return local_; }
    bool has_local() const { return !local_.empty(); }
    std::string local() const;        // joined with '.', empty if none

    std::uint64_t epoch() const { return epoch_; }
    const std::vector<std::uint64_t>& release() const { return release_; }

    std::strong_ordering operator<=>(const Version& other) const;
    bool operator==(const Version& other) const { return (*this <=> other) == 0; }

private:
    std::string original_;
    std::uint64_t epoch_ = 0;
    std::vector<std::uint64_t> release_;
    std::optional<std::pair<std::string, std::uint64_t>> pre_;  // "a", "b", "rc"
    std::optional<std::uint64_t> post_;
    std::optional<std::uint64_t> dev_;
    std::vector<std::string> local_;  // lowercased
};

struct SpecifierClause {
    std::string op;  // "==", "!=", ">=", "<=", ">", "<", "~="
    Version version;
    bool wildcard = false;  // "==2.9.*"
    bool matches(const Version& candidate) const;
    std::string text() const;
};

class SpecifierSet {
public:
    SpecifierSet() = default;
    static SpecifierSet parse(std::string_view text);
    static std::optional<SpecifierSet> try_parse(std::string_view text);
    // ">=LOW,<HIGH" (either may be empty: open on that side).
    static SpecifierSet range(std::string_view low, std::string_view high);

    bool any() const { return clauses_.empty(); }
    bool contains(const Version& candidate) const;
    std::optional<SpecifierSet> intersect(const SpecifierSet& other) const;
    std::string text() const;
    const std::vector<SpecifierClause>& clauses() const { return clauses_; }
    bool operator==(const SpecifierSet& other) const { return text() == other.text(); }
    // The same clauses, versions compared as versions (">=2.10.0,<2.11" is ">=2.10,<2.11").
    bool same_as(const SpecifierSet& other) const;

private:
    std::vector<SpecifierClause> clauses_;
};

}  // namespace wheelfix::wheel
