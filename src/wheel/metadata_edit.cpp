// Header edits as byte-range replacements: the header block is cut into fields
// (a header line plus its continuation lines, with their line ends), each edit
// replaces some fields or inserts at a field boundary, and everything between is
// copied from the original text.
#include "wheelfix/wheel/metadata_edit.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/wheel/filename.hpp"
#include "wheelfix/wheel/metadata.hpp"

#include <algorithm>
#include <cctype>

namespace wheelfix::wheel {

namespace {

struct Field {
    std::size_t begin = 0, end = 0;  // [begin, end) including continuation lines and line ends
    std::string name;
    std::string value;               // first line's value, continuation lines joined with '\n'
};

struct HeaderBlock {
    std::vector<Field> fields;
    std::size_t end = 0;             // where the headers end: the blank line, or the end of the text
    std::string line_end = "\n";
};

struct Replacement {
    std::size_t begin = 0, end = 0;
    std::string text;
};

std::string_view without_line_end(std::string_view line) {
    if (line.ends_with('\n')) line.remove_suffix(1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    return line;
}

Field field_from_line(std::size_t begin, std::size_t end, std::string_view line) {
    Field field{begin, end, {}, {}};
    auto colon = line.find(':');
    field.name = std::string(line.substr(0, colon));
    auto value = colon == std::string_view::npos ? std::string_view{} : line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    field.value = std::string(value);
    return field;
}

HeaderBlock header_block(std::string_view text) {
    HeaderBlock block;
    auto first_newline = text.find('\n');
    if (first_newline != std::string_view::npos && first_newline > 0 && text[first_newline - 1] == '\r')
        block.line_end = "\r\n";
    std::size_t position = 0;
    while (position < text.size()) {
        auto newline = text.find('\n', position);
        auto next = newline == std::string_view::npos ? text.size() : newline + 1;
        auto line = without_line_end(text.substr(position, next - position));
        if (line.empty()) break;
        bool continuation = line.front() == ' ' || line.front() == '\t';
        if (continuation && !block.fields.empty()) {
            block.fields.back().end = next;
            block.fields.back().value += "\n" + std::string(line);
        } else {
            block.fields.push_back(field_from_line(position, next, line));
        }
        position = next;
    }
    block.end = position;
    return block;
}

// Where a new line goes after `position` (a field end, or the block end): a text
// whose last header has no line end needs one first.
Replacement insertion_after(std::string_view text, const HeaderBlock& block, std::size_t position, std::string line) {
    std::string prefix = position > 0 && text[position - 1] != '\n' ? block.line_end : "";
    return {position, position, prefix + line + (prefix.empty() ? block.line_end : "")};
}

std::string applied(std::string_view text, std::vector<Replacement> replacements) {
    std::stable_sort(replacements.begin(), replacements.end(),
                     [](const Replacement& a, const Replacement& b) { return a.begin < b.begin; });
    std::string out;
    std::size_t copied = 0;
    for (const auto& replacement : replacements) {
        out.append(text.substr(copied, replacement.begin - copied));
        out += replacement.text;
        copied = replacement.end;
    }
    out.append(text.substr(copied));
    return out;
}

// The line end a replaced field had (its last line's), so the file keeps its style.
std::string line_end_of(std::string_view text, const Field& field, const HeaderBlock& block) {
    std::string_view span = text.substr(field.begin, field.end - field.begin);
    if (span.ends_with("\r\n")) return "\r\n";
    if (span.ends_with('\n')) return "\n";
    return field.end == text.size() ? "" : block.line_end;
}

std::string header_line(std::string_view name, std::string_view value, std::string_view line_end) {
    return std::string(name) + ": " + std::string(value) + std::string(line_end);
}

bool is_torch(const Requirement& requirement) { return normalize_project_name(requirement.name) == "torch"; }

std::string pinned_requirement(const Requirement& requirement, std::string_view specifier) {
    std::string out = requirement.name;
    if (!requirement.extras.empty()) {
        out += "[";
        for (std::size_t i = 0; i < requirement.extras.size(); ++i) out += (i ? "," : "") + requirement.extras[i];
        out += "]";
    }
    out += specifier;
    if (!requirement.marker.empty()) out += "; " + requirement.marker;
    return out;
}

std::string next_minor(const Version& torch) {
    return std::to_string(torch.release()[0]) + "." + std::to_string(torch.release()[1] + 1);
}

}  // namespace

std::optional<SpecifierSet> torch_pin_specifier(const Version& torch, TorchPin pin) {
    if (pin == TorchPin::none) return std::nullopt;
    if (torch.release().size() < 2)
        throw InputError("--torch", "needs at least MAJOR.MINOR, got '" + torch.original() + "'");
    if (pin == TorchPin::exact) return SpecifierSet::parse("==" + torch.public_part());
    std::string minor = std::to_string(torch.release()[0]) + "." + std::to_string(torch.release()[1]);
    return SpecifierSet::range(minor, next_minor(torch));
}

std::string set_version(std::string_view metadata, std::string_view version) {
    auto block = header_block(metadata);
    auto field = std::find_if(block.fields.begin(), block.fields.end(),
                              [](const Field& f) { return same_header_name(f.name, "Version"); });
    if (field == block.fields.end()) throw InputError("METADATA", "no Version header");
    return applied(metadata, {{field->begin, field->end,
                               header_line(field->name, version, line_end_of(metadata, *field, block))}});
}

PinnedTorch pin_torch(std::string_view metadata, const SpecifierSet& pin, PinWrite write,
                      const std::optional<SpecifierSet>& earlier) {
    const std::string specifier = pin.text();
    auto block = header_block(metadata);
    PinnedTorch result;
    std::vector<Replacement> replacements;
    const Field* last_requirement = nullptr;
    bool found = false;
    for (const auto& field : block.fields) {
        if (!same_header_name(field.name, "Requires-Dist")) continue;
        last_requirement = &field;
        auto requirement = parse_requirement(field.value);
        if (!is_torch(requirement)) continue;
        found = true;
        if (!requirement.url.empty()) continue;
        std::string written = specifier;
        const auto own = SpecifierSet::try_parse(requirement.specifier);
        const bool ours = own && earlier && !own->any() && own->same_as(*earlier);
        if (write == PinWrite::within_author && !ours) {
            if (!own) throw InputError("METADATA", "cannot read the author's Requires-Dist: " + field.value);
            const auto meet = pin.intersect(*own);
            if (!meet)
                throw InputError("METADATA", "Requires-Dist: " + field.value + " excludes torch" + specifier +
                                                 ": wheelfix never loosens an author's pin");
            written = meet->text();
        }
        auto pinned = pinned_requirement(requirement, written);
        result.changes.emplace_back(field.value, pinned);
        replacements.push_back({field.begin, field.end, header_line(field.name, pinned, line_end_of(metadata, field, block))});
    }
    if (!found) {
        std::string added = "torch" + std::string(specifier);
        std::size_t at = last_requirement ? last_requirement->end : block.end;
        replacements.push_back(insertion_after(metadata, block, at, header_line("Requires-Dist", added, "")));
        result.changes.emplace_back("", added);
    }
    result.text = applied(metadata, std::move(replacements));
    return result;
}

std::string add_requirements(std::string_view metadata, const std::vector<Requirement>& requirements) {
    auto block = header_block(metadata);
    const Field* last_requirement = nullptr;
    std::vector<Requirement> present;
    for (const auto& field : block.fields)
        if (same_header_name(field.name, "Requires-Dist")) {
            last_requirement = &field;
            present.push_back(parse_requirement(field.value));
        }
    std::string lines;
    for (const auto& requirement : requirements) {
        const auto held = [&](const Requirement& there) { return same_requirement(there, requirement); };
        if (std::any_of(present.begin(), present.end(), held)) continue;
        lines += (lines.empty() ? "" : block.line_end) + header_line("Requires-Dist", requirement.text, "");
        present.push_back(requirement);
    }
    if (lines.empty()) return std::string(metadata);
    std::vector<Replacement> replacements;
    replacements.push_back(insertion_after(metadata, block, last_requirement ? last_requirement->end : block.end, lines));
    return applied(metadata, std::move(replacements));
}

std::string set_tags(std::string_view wheel_file, const std::vector<std::string>& tags) {
    auto block = header_block(wheel_file);
    std::string lines;
    for (const auto& tag : tags) lines += header_line("Tag", tag, block.line_end);
    std::vector<Replacement> replacements;
    for (const auto& field : block.fields)
        if (same_header_name(field.name, "Tag"))
            replacements.push_back({field.begin, field.end, replacements.empty() ? lines : std::string()});
    if (replacements.empty() && !tags.empty()) {
        lines.resize(lines.size() - block.line_end.size());
        replacements.push_back(insertion_after(wheel_file, block, block.end, lines));
    }
    return applied(wheel_file, std::move(replacements));
}

}  // namespace wheelfix::wheel
