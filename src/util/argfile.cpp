// Argument files (util/argfile.hpp has the contract and the quoting rules).
#include "wheelfix/util/argfile.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"

#include <filesystem>

namespace wheelfix {

namespace {

constexpr int kMaxDepth = 16;
constexpr std::uint64_t kMaxFileSize = std::uint64_t(32) << 20;  // per argument file
constexpr int kMaxFiles = 256;                                   // argument files read in one expansion
constexpr std::size_t kMaxExpandedBytes = std::size_t(64) << 20;  // the arguments they expand to, in all
constexpr std::size_t kArgumentOverhead = sizeof(std::string);

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Cuts one file's text into words; a small state machine over the characters.
class Splitter {
public:
    Splitter(std::string_view text, const std::string& source) : text_(text), source_(source) {}

    std::vector<ArgumentWord> split() {
        while (i_ < text_.size()) {
            char c = text_[i_];
            if (is_blank(c)) {
                finish_word();
                ++i_;
            } else if (c == '#' && !in_word_) {
                skip_comment();
            } else if (c == '\'') {
                single_quoted();
            } else if (c == '"') {
                double_quoted();
            } else if (c == '\\') {
                escaped();
            } else {
                append(c, false);
                ++i_;
            }
        }
        finish_word();
        return std::move(words_);
    }

private:
    void append(char c, bool quoted) {
        start_word(quoted);
        current_.text += c;
    }
    void start_word(bool quoted) {
        if (!in_word_) current_.literal = quoted;
        in_word_ = true;
    }
    void finish_word() {
        if (in_word_) words_.push_back(std::move(current_));
        current_ = {};
        in_word_ = false;
    }
    void skip_comment() {
        while (i_ < text_.size() && text_[i_] != '\n') ++i_;
    }
    void single_quoted() {
        auto close = text_.find('\'', i_ + 1);
        if (close == std::string_view::npos) throw InputError(source_, "unterminated ' quote");
        start_word(true);
        current_.text.append(text_.substr(i_ + 1, close - i_ - 1));
        i_ = close + 1;
    }
    void double_quoted() {
        start_word(true);
        for (++i_; i_ < text_.size(); ++i_) {
            char c = text_[i_];
            if (c == '"') {
                ++i_;
                return;
            }
            if (c == '\\' && i_ + 1 < text_.size() && (text_[i_ + 1] == '"' || text_[i_ + 1] == '\\')) c = text_[++i_];
            current_.text += c;
        }
        throw InputError(source_, "unterminated \" quote");
    }
    void escaped() {
        if (i_ + 1 >= text_.size()) {  // a trailing backslash stands for itself
            append('\\', false);
            ++i_;
            return;
        }
        char next = text_[i_ + 1];
        i_ += 2;
        if (next == '\n') return;  // line continuation
        append(next, true);
    }

    std::string_view text_;
    const std::string& source_;
    std::size_t i_ = 0;
    std::vector<ArgumentWord> words_;
    ArgumentWord current_;
    bool in_word_ = false;
};

std::string read_argument_file(const std::string& path, const std::string& label) {
    std::error_code error;
    if (!std::filesystem::exists(path, error)) throw InputError(label, "cannot read the argument file");
    try {
        return read_regular_file(path, kMaxFileSize);
    } catch (const InputError& refused) {
        throw InputError(label, "cannot read the argument file: " + refused.problem());
    }
}

bool names_file(const ArgumentWord& word) { return !word.literal && word.text.size() > 1 && word.text[0] == '@'; }

struct Expansion {
    std::vector<std::string> out;
    bool after_dashes = false;
    int files_read = 0;
    std::size_t bytes = 0;
};

void expand_into(Expansion& expansion, const std::vector<ArgumentWord>& words, int depth) {
    for (const ArgumentWord& word : words) {
        if (expansion.after_dashes || !names_file(word)) {
            if (!word.literal && word.text == "--") expansion.after_dashes = true;
            expansion.bytes += word.text.size() + kArgumentOverhead;
            if (expansion.bytes > kMaxExpandedBytes)
                throw InputError(printable(word.text.substr(0, 80)),
                                 "argument files expand to more than 64 MiB of arguments");
            expansion.out.push_back(word.text);
            continue;
        }
        const std::string label = word.text;
        if (depth >= kMaxDepth)
            throw InputError(label, "argument files nested more than 16 deep (does a file name itself?)");
        if (++expansion.files_read > kMaxFiles)
            throw InputError(label, "more than " + std::to_string(kMaxFiles) +
                                        " argument files read (do the files name each other?)");
        std::string path = word.text.substr(1);
        expand_into(expansion, split_argument_text(read_argument_file(path, label), path), depth + 1);
    }
}

}  // namespace

std::vector<ArgumentWord> split_argument_text(std::string_view text, const std::string& source) {
    return Splitter(text, source).split();
}

std::vector<std::string> expand_argument_files(const std::vector<std::string>& arguments) {
    std::vector<ArgumentWord> words;
    words.reserve(arguments.size());
    for (const auto& argument : arguments) words.push_back({argument, false});
    Expansion expansion;
    expand_into(expansion, words, 0);
    return std::move(expansion.out);
}

}  // namespace wheelfix
