// Target profiles: the parser for the line format and the built-in table.
#include "wheelfix/policy/profile.hpp"

#include "data_lines.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/text.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>

extern const char wheelfix_profile_cuda13_blackwell[];
extern const unsigned long wheelfix_profile_cuda13_blackwell_size;
extern const char wheelfix_profile_cuda13_blackwell_all[];
extern const unsigned long wheelfix_profile_cuda13_blackwell_all_size;
extern const char wheelfix_profile_cuda12_hopper[];
extern const unsigned long wheelfix_profile_cuda12_hopper_size;

namespace wheelfix::policy {

namespace {

struct BuiltinProfile {
    std::string_view name;
    std::string_view text;
};

const std::vector<BuiltinProfile>& builtin_profiles() {
    static const std::vector<BuiltinProfile> table = {
        {"cuda12-hopper", {wheelfix_profile_cuda12_hopper, wheelfix_profile_cuda12_hopper_size}},
        {"cuda13-blackwell", {wheelfix_profile_cuda13_blackwell, wheelfix_profile_cuda13_blackwell_size}},
        {"cuda13-blackwell-all", {wheelfix_profile_cuda13_blackwell_all, wheelfix_profile_cuda13_blackwell_all_size}},
    };
    return table;
}

constexpr std::string_view kKeys = "description, cuda-runtime-major, sm, rpath, min-platform, replace-needed";

// Reads one record into the profile; `fail` throws with the line's location.
class ProfileParser {
public:
    ProfileParser(Profile& profile, std::string source) : profile_(profile), source_(std::move(source)) {}

    void read(const DataLine& line) {
        line_ = &line;
        const auto& key = line.fields.front();
        if (key == "description") return read_description();
        if (key == "cuda-runtime-major") return read_runtime_major();
        if (key == "sm") return read_sms();
        if (key == "rpath") return read_rpath();
        if (key == "min-platform") return read_min_platform();
        if (key == "replace-needed") return read_replace_needed();
        fail("unknown key '" + key + "' (keys: " + std::string(kKeys) + ")");
    }

private:
    [[noreturn]] void fail(const std::string& problem) const {
        throw InputError(source_ + ":" + std::to_string(line_->number), problem);
    }

    const std::string& key() const { return line_->fields.front(); }

    void expect_values(std::size_t count, std::string_view shape) const {
        if (line_->fields.size() != count + 1) fail("'" + key() + "' takes " + std::string(shape));
    }

    void once(bool already_set) const {
        if (already_set) fail("'" + key() + "' given twice");
    }

    static std::optional<int> number(std::string_view text) {
        int value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
        return value;
    }

    void read_description() {
        once(!profile_.description.empty());
        if (line_->rest_after_first.empty()) fail("'description' takes a text");
        profile_.description = line_->rest_after_first;
    }

    void read_runtime_major() {
        once(profile_.cuda_runtime_major.has_value());
        expect_values(1, "one number, the CUDA major version (e.g. 13)");
        auto major = number(line_->fields[1]);
        if (!major || *major < 1 || *major > 99) fail("'" + line_->fields[1] + "' is not a CUDA major version");
        profile_.cuda_runtime_major = *major;
    }

    // "sm_120a" -> "write 120 for sm_120"; anything else gets the sm_100 example.
    static std::string spelling_hint(std::string_view value) {
        if (value.starts_with("sm_")) value.remove_prefix(3);
        while (!value.empty() && (value.back() == 'a' || value.back() == 'f')) value.remove_suffix(1);
        std::string digits = number(value) ? std::string(value) : "100";
        return "write " + digits + " for sm_" + digits;
    }

    void read_sms() {
        if (line_->fields.size() < 2) fail("'sm' takes compute capabilities such as 100 (for sm_100)");
        for (std::size_t i = 1; i < line_->fields.size(); ++i) {
            auto sm = number(line_->fields[i]);
            if (!sm || *sm < 10 || *sm > 999)
                fail("'" + line_->fields[i] + "' is not a compute capability (" + spelling_hint(line_->fields[i]) + ")");
            auto value = static_cast<std::uint32_t>(*sm);
            if (std::find(profile_.sms.begin(), profile_.sms.end(), value) != profile_.sms.end())
                fail("sm " + line_->fields[i] + " listed twice");
            profile_.sms.push_back(value);
        }
    }

    void read_rpath() {
        expect_values(1, "one directory, e.g. {root}/torch/lib");
        const auto& path = line_->fields[1];
        if (!path.starts_with("{root}") && !path.starts_with("$ORIGIN"))
            fail("rpath '" + path + "' must start with {root} or $ORIGIN (a wheel cannot rely on absolute paths)");
        if (path.find(':') != std::string::npos) fail("rpath '" + path + "' holds ':'; give one directory a line");
        if (std::find(profile_.rpaths.begin(), profile_.rpaths.end(), path) == profile_.rpaths.end())
            profile_.rpaths.push_back(path);
    }

    void read_min_platform() {
        once(profile_.min_platform.has_value());
        expect_values(1, "one platform tag without architecture, e.g. manylinux_2_28");
        auto tag = parse_platform_tag(line_->fields[1] + "_x86_64");
        bool usable = tag.kind == PlatformTag::Kind::manylinux || tag.kind == PlatformTag::Kind::musllinux;
        if (!usable || tag.arch != "x86_64")
            fail("'" + line_->fields[1] + "' is not a manylinux or musllinux tag (e.g. manylinux_2_28, musllinux_1_2)");
        tag.arch.clear();
        tag.text = line_->fields[1];
        profile_.min_platform = tag;
    }

    void read_replace_needed() {
        expect_values(2, "two sonames: OLD NEW");
        const auto& from = line_->fields[1];
        for (const auto& existing : profile_.replace_needed)
            if (existing.from == from) fail("replace-needed " + from + " given twice");
        profile_.replace_needed.push_back({from, line_->fields[2]});
    }

    Profile& profile_;
    std::string source_;
    const DataLine* line_ = nullptr;
};

const BuiltinProfile* find_builtin(std::string_view name) {
    for (const auto& builtin : builtin_profiles())
        if (builtin.name == name) return &builtin;
    return nullptr;
}

Profile load_profile_file(const std::filesystem::path& path) {
    MappedFile file(path);
    auto bytes = file.bytes();
    std::string name = path.filename().string();
    if (name.ends_with(".profile")) name.resize(name.size() - 8);
    return parse_profile(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), name,
                         path.string());
}

}  // namespace

std::string Profile::min_platform_name() const {
    if (!min_platform) return {};
    auto prefix = min_platform->kind == PlatformTag::Kind::musllinux ? "musllinux_" : "manylinux_";
    return prefix + std::to_string(min_platform->major) + "_" + std::to_string(min_platform->minor);
}

Profile parse_profile(std::string_view text, std::string name, std::string source) {
    Profile profile;
    profile.name = std::move(name);
    profile.source = source;
    ProfileParser parser(profile, source);
    bool any = false;
    for_each_data_line(text, [&](const DataLine& line) {
        parser.read(line);
        any = true;
    });
    if (!any) throw InputError(source, "empty target profile (keys: " + std::string(kKeys) + ")");
    return profile;
}

Profile load_profile(std::string_view name_or_path) {
    const auto* builtin = find_builtin(name_or_path);
    std::filesystem::path path(name_or_path);
    std::error_code error;
    bool is_path = name_or_path.find('/') != std::string_view::npos ||
                   (!builtin && std::filesystem::is_regular_file(path, error));
    if (is_path) return load_profile_file(path);
    if (!builtin)
        throw InputError(std::string(name_or_path), "no such target profile; built-in profiles: " +
                                                        join(builtin_profile_names(), ", ") + " (or give a profile file)");
    return parse_profile(builtin->text, std::string(builtin->name), "built-in");
}

std::vector<std::string> builtin_profile_names() {
    std::vector<std::string> names;
    for (const auto& builtin : builtin_profiles()) names.emplace_back(builtin.name);
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace wheelfix::policy
