// PEP 440 versions: a hand-written parser for the grammar of PEP 440's appendix
// (the permissive regex packaging uses), normalization, and packaging's sort key.
//
// The parser walks the lowercased text once, component by component: [v] [N!]
// N(.N)* [pre] [post] [dev] [+local]. Each optional component either matches
// completely or leaves the cursor where it was. Numbers must fit 64 bits.
// Ordering follows packaging's _cmpkey: epoch, release without trailing zeros,
// pre (a dev-only release sorts before its pre-releases), post, dev, local; in local
// labels a number sorts above any string and a label that is a prefix sorts lower.
#include "wheelfix/wheel/version.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/text.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <tuple>

namespace wheelfix::wheel {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_separator(char c) { return c == '.' || c == '-' || c == '_'; }
bool is_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z'); }

class Cursor {
public:
    explicit Cursor(std::string_view text) : text_(text) {}

    bool at_end() const { return pos_ == text_.size(); }
    std::size_t position() const { return pos_; }
    void rewind(std::size_t position) { pos_ = position; }
    char peek(std::size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

    bool take(char c) {
        if (peek() != c) return false;
        ++pos_;
        return true;
    }
    bool take_word(std::string_view word) {
        if (text_.substr(pos_, word.size()) != word) return false;
        pos_ += word.size();
        return true;
    }
    void take_optional_separator() {
        if (is_separator(peek())) ++pos_;
    }
    // Digits as a number; nullopt (cursor unchanged) without digits. Sets overflow.
    std::optional<std::uint64_t> take_number(bool& overflow) {
        if (!is_digit(peek())) return std::nullopt;
        std::uint64_t value = 0;
        while (is_digit(peek())) {
            auto digit = static_cast<std::uint64_t>(text_[pos_++] - '0');
            if (value > (UINT64_MAX - digit) / 10) overflow = true;
            value = value * 10 + digit;
        }
        return value;
    }
    std::string_view take_alnum_run() {
        auto start = pos_;
        while (is_alnum(peek())) ++pos_;
        return text_.substr(start, pos_ - start);
    }

private:
    std::string_view text_;
    std::size_t pos_ = 0;
};

// The number after a pre/post/dev label: "[sep]N", implicitly 0 when absent. A
// separator is only consumed when digits follow it.
std::uint64_t take_label_number(Cursor& cursor, bool& overflow) {
    auto before = cursor.position();
    cursor.take_optional_separator();
    if (auto number = cursor.take_number(overflow)) return *number;
    cursor.rewind(before);
    return 0;
}

// Tries "[sep]label[sep][N]" for one of the spellings; returns the matched spelling.
std::optional<std::string_view> take_labelled(Cursor& cursor, std::span<const std::string_view> spellings) {
    auto before = cursor.position();
    cursor.take_optional_separator();
    for (auto spelling : spellings)
        if (cursor.take_word(spelling)) return spelling;
    cursor.rewind(before);
    return std::nullopt;
}

// Longest spellings first so that "preview" is not read as "pre" + "view".
constexpr std::array<std::string_view, 8> kPreSpellings{"preview", "alpha", "beta", "pre", "rc", "a", "b", "c"};
constexpr std::array<std::string_view, 3> kPostSpellings{"post", "rev", "r"};
constexpr std::array<std::string_view, 1> kDevSpellings{"dev"};

std::string canonical_pre_letter(std::string_view spelling) {
    if (spelling == "alpha" || spelling == "a") return "a";
    if (spelling == "beta" || spelling == "b") return "b";
    return "rc";  // rc, c, pre, preview
}

std::string strip_leading_zeros(std::string_view digits) {
    auto first = digits.find_first_not_of('0');
    return first == std::string_view::npos ? "0" : std::string(digits.substr(first));
}

// Local label segments, lowercased; numeric segments lose leading zeros (as
// packaging's int() does). Empty when the label is malformed.
std::vector<std::string> take_local_segments(Cursor& cursor) {
    std::vector<std::string> segments;
    while (true) {
        auto segment = cursor.take_alnum_run();
        if (segment.empty()) return {};
        segments.push_back(all_digits(segment) ? strip_leading_zeros(segment) : std::string(segment));
        if (!is_separator(cursor.peek())) return segments;
        cursor.take_optional_separator();
    }
}

std::strong_ordering compare_release(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) {
    for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
        std::uint64_t left = i < a.size() ? a[i] : 0, right = i < b.size() ? b[i] : 0;
        if (left != right) return left <=> right;
    }
    return std::strong_ordering::equal;
}

// Numbers (already without leading zeros) compare by length, then digit by digit.
std::strong_ordering compare_local_segment(const std::string& a, const std::string& b) {
    bool a_numeric = all_digits(a), b_numeric = all_digits(b);
    if (a_numeric != b_numeric) return a_numeric ? std::strong_ordering::greater : std::strong_ordering::less;
    if (a_numeric && a.size() != b.size()) return a.size() <=> b.size();
    return a.compare(b) <=> 0;
}

std::strong_ordering compare_local(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
        if (auto order = compare_local_segment(a[i], b[i]); order != 0) return order;
    return a.size() <=> b.size();  // also: no label (empty) sorts below any label
}

int pre_letter_rank(const std::string& letter) { return letter == "a" ? 0 : letter == "b" ? 1 : 2; }

}  // namespace

std::optional<Version> Version::try_parse(std::string_view text) {
    std::string lowered = ascii_lower(trim(text));
    Cursor cursor(lowered);
    Version version;
    version.original_ = std::string(text);
    bool overflow = false;

    cursor.take('v');
    auto start = cursor.position();
    auto first = cursor.take_number(overflow);
    if (!first) return std::nullopt;
    if (cursor.take('!')) {
        version.epoch_ = *first;
    } else {
        cursor.rewind(start);
    }
    do {
        auto number = cursor.take_number(overflow);
        if (!number) return std::nullopt;
        version.release_.push_back(*number);
    } while (cursor.peek() == '.' && is_digit(cursor.peek(1)) && cursor.take('.'));

    if (auto spelling = take_labelled(cursor, kPreSpellings))
        version.pre_ = std::pair{canonical_pre_letter(*spelling), take_label_number(cursor, overflow)};
    if (cursor.peek() == '-' && is_digit(cursor.peek(1))) {
        cursor.take('-');
        version.post_ = cursor.take_number(overflow);
    } else if (take_labelled(cursor, kPostSpellings)) {
        version.post_ = take_label_number(cursor, overflow);
    }
    if (take_labelled(cursor, kDevSpellings)) version.dev_ = take_label_number(cursor, overflow);
    if (cursor.take('+')) {
        version.local_ = take_local_segments(cursor);
        if (version.local_.empty()) return std::nullopt;
    }
    if (!cursor.at_end() || overflow) return std::nullopt;
    return version;
}

Version Version::parse(std::string_view text) {
    if (auto version = try_parse(text)) return *version;
    throw InputError("", "invalid PEP 440 version '" + std::string(text) + "'");
}

std::string Version::public_part() const {
    std::string out;
    if (epoch_ != 0) out += std::to_string(epoch_) + "!";
    out += join(release_, ".");
    if (pre_) out += pre_->first + std::to_string(pre_->second);
    if (post_) out += ".post" + std::to_string(*post_);
    if (dev_) out += ".dev" + std::to_string(*dev_);
    return out;
}

std::string Version::local() const { return join(local_, "."); }

std::string Version::normalized() const { return has_local() ? public_part() + "+" + local() : public_part(); }

std::strong_ordering Version::operator<=>(const Version& other) const {
    // packaging's pre key: a dev release without pre/post sorts before every pre-release
    // (phase -1); no pre-release sorts after them (phase 1).
    auto pre_key = [](const Version& v) {
        if (v.pre_) return std::tuple{0, pre_letter_rank(v.pre_->first), v.pre_->second};
        int phase = (!v.post_ && v.dev_) ? -1 : 1;
        return std::tuple{phase, 0, std::uint64_t{0}};
    };
    auto post_key = [](const Version& v) { return std::tuple{v.post_.has_value(), v.post_.value_or(0)}; };
    auto dev_key = [](const Version& v) { return std::tuple{!v.dev_.has_value(), v.dev_.value_or(0)}; };

    if (auto order = epoch_ <=> other.epoch_; order != 0) return order;
    if (auto order = compare_release(release_, other.release_); order != 0) return order;
    if (auto order = pre_key(*this) <=> pre_key(other); order != 0) return order;
    if (auto order = post_key(*this) <=> post_key(other); order != 0) return order;
    if (auto order = dev_key(*this) <=> dev_key(other); order != 0) return order;
    return compare_local(local_, other.local_);
}

namespace {

bool release_prefix(const std::vector<std::uint64_t>& release, const std::vector<std::uint64_t>& prefix) {
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if ((i < release.size() ? release[i] : 0) != prefix[i]) return false;
    return true;
}

// "2.9" -> "2.10": the first version after every 2.9.x (the upper end of "==2.9.*" / "~=2.9.1").
Version after_series(std::vector<std::uint64_t> series) {
    if (series.empty()) series.push_back(0);
    ++series.back();
    return Version::parse(join(series, "."));
}

// A clause as bounds: lower (inclusive or not), upper (inclusive or not).
struct Bounds {
    std::optional<Version> low, high;
    bool low_inclusive = true, high_inclusive = false;
};

Bounds bounds_of(const SpecifierClause& clause) {
    Bounds bounds;
    const Version& v = clause.version;
    if (clause.op == ">=") bounds.low = v;
    else if (clause.op == ">") bounds.low = v, bounds.low_inclusive = false;
    else if (clause.op == "<") bounds.high = v;
    else if (clause.op == "<=") bounds.high = v, bounds.high_inclusive = true;
    else if (clause.op == "==" && !clause.wildcard) bounds.low = v, bounds.high = v, bounds.high_inclusive = true;
    else if (clause.op == "==") bounds.low = v, bounds.high = after_series(v.release());
    else if (clause.op == "~=") {
        std::vector<std::uint64_t> series = v.release();
        series.pop_back();
        bounds.low = v;
        bounds.high = after_series(series);
    }
    return bounds;
}

// Whether `strong` alone implies `weak` (every version `strong` admits, `weak` admits).
bool implies(const SpecifierClause& strong, const SpecifierClause& weak) {
    if (strong.text() == weak.text()) return true;
    if (strong.op == "==" && !strong.wildcard) return weak.matches(strong.version);
    if (weak.op == "!=" || weak.op == "~=" || weak.op == "==" || strong.op == "!=") return false;
    const Bounds s = bounds_of(strong), w = bounds_of(weak);
    if (w.low) {
        if (!s.low) return false;
        const auto order = *s.low <=> *w.low;
        return order > 0 || (order == 0 && (w.low_inclusive || !s.low_inclusive));
    }
    if (w.high) {
        if (!s.high) return false;
        const auto order = *s.high <=> *w.high;
        return order < 0 || (order == 0 && (w.high_inclusive || !s.high_inclusive));
    }
    return false;
}

}  // namespace

bool SpecifierClause::matches(const Version& candidate) const {
    const Version bare = Version::parse(candidate.public_part());
    if (op == "==") return wildcard ? release_prefix(bare.release(), version.release()) : bare == version;
    if (op == "!=") return wildcard ? !release_prefix(bare.release(), version.release()) : !(bare == version);
    if (op == ">=") return bare >= version;
    if (op == "<=") return bare <= version;
    if (op == ">") return bare > version;
    if (op == "<") return bare < version;
    if (op == "~=") {
        std::vector<std::uint64_t> series = version.release();
        series.pop_back();
        return bare >= version && release_prefix(bare.release(), series);
    }
    return false;
}

std::string SpecifierClause::text() const { return op + version.normalized() + (wildcard ? ".*" : ""); }

std::optional<SpecifierSet> SpecifierSet::try_parse(std::string_view text) {
    SpecifierSet set;
    auto trim = [](std::string_view part) {
        while (!part.empty() && (part.front() == ' ' || part.front() == '\t')) part.remove_prefix(1);
        while (!part.empty() && (part.back() == ' ' || part.back() == '\t')) part.remove_suffix(1);
        return part;
    };
    text = trim(text);
    if (text.empty()) return set;
    while (true) {
        const std::size_t comma = text.find(',');
        const std::string_view clause = trim(text.substr(0, comma));
        std::size_t op = 0;
        while (op < clause.size() && std::string_view("<>=!~").find(clause[op]) != std::string_view::npos) ++op;
        const std::string oper(clause.substr(0, op));
        std::string_view operand = trim(clause.substr(op));
        const bool wildcard = operand.ends_with(".*");
        if (wildcard) operand.remove_suffix(2);
        const bool known = oper == "==" || oper == "!=" || oper == ">=" || oper == "<=" || oper == ">" || oper == "<" ||
                           oper == "~=";
        auto version = Version::try_parse(operand);
        if (!known || !version || (wildcard && oper != "==" && oper != "!=")) return std::nullopt;
        if (oper == "~=" && version->release().size() < 2) return std::nullopt;
        set.clauses_.push_back({oper, *version, wildcard});
        if (comma == std::string_view::npos) return set;
        text.remove_prefix(comma + 1);
    }
}

SpecifierSet SpecifierSet::parse(std::string_view text) {
    auto set = try_parse(text);
    if (!set) throw InputError("", "'" + std::string(text) + "' is not a PEP 440 specifier like '>=2.9,<2.11'");
    return *set;
}

SpecifierSet SpecifierSet::range(std::string_view low, std::string_view high) {
    SpecifierSet set;
    if (!low.empty()) set.clauses_.push_back({">=", Version::parse(low), false});
    if (!high.empty()) set.clauses_.push_back({"<", Version::parse(high), false});
    return set;
}

bool SpecifierSet::contains(const Version& candidate) const {
    return std::all_of(clauses_.begin(), clauses_.end(), [&](const SpecifierClause& c) { return c.matches(candidate); });
}

std::optional<SpecifierSet> SpecifierSet::intersect(const SpecifierSet& other) const {
    std::vector<SpecifierClause> all = clauses_;
    all.insert(all.end(), other.clauses_.begin(), other.clauses_.end());
    // Do the bounds meet?
    Bounds meet;
    for (const SpecifierClause& clause : all) {
        const Bounds b = bounds_of(clause);
        if (b.low) {
            const bool tighter = !meet.low || *b.low > *meet.low || (*b.low == *meet.low && !b.low_inclusive);
            if (tighter) meet.low = b.low, meet.low_inclusive = b.low_inclusive;
        }
        if (b.high) {
            const bool tighter = !meet.high || *b.high < *meet.high || (*b.high == *meet.high && !b.high_inclusive);
            if (tighter) meet.high = b.high, meet.high_inclusive = b.high_inclusive;
        }
    }
    if (meet.low && meet.high) {
        const auto order = *meet.low <=> *meet.high;
        if (order > 0 || (order == 0 && !(meet.low_inclusive && meet.high_inclusive))) return std::nullopt;
    }
    for (const SpecifierClause& clause : all)
        if (clause.op == "==" && !clause.wildcard &&
            !std::all_of(all.begin(), all.end(), [&](const SpecifierClause& c) { return c.matches(clause.version); }))
            return std::nullopt;
    // Keep a clause unless an earlier kept one, or a later one, implies it.
    SpecifierSet result;
    for (std::size_t i = 0; i < all.size(); ++i) {
        bool implied = false;
        for (std::size_t j = 0; j < all.size() && !implied; ++j) {
            if (i == j) continue;
            const bool same = all[j].text() == all[i].text();
            implied = same ? j < i : implies(all[j], all[i]) && !(implies(all[i], all[j]) && j > i);
        }
        if (!implied) result.clauses_.push_back(all[i]);
    }
    return result;
}

bool SpecifierSet::same_as(const SpecifierSet& other) const {
    if (clauses_.size() != other.clauses_.size()) return false;
    for (std::size_t i = 0; i < clauses_.size(); ++i)
        if (clauses_[i].op != other.clauses_[i].op || clauses_[i].wildcard != other.clauses_[i].wildcard ||
            !(clauses_[i].version == other.clauses_[i].version))
            return false;
    return true;
}

std::string SpecifierSet::text() const {
    std::string out;
    for (const SpecifierClause& clause : clauses_) out += (out.empty() ? "" : ",") + clause.text();
    return out;
}

}  // namespace wheelfix::wheel
