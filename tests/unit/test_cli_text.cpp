// Unit tests: argument files (util/argfile.hpp), tables (util/table.hpp) and the
// progress hook (util/progress.hpp).
#include "wheelfix/util/argfile.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/progress.hpp"
#include "wheelfix/util/table.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace wheelfix;

namespace {

std::vector<std::string> words(std::string_view text) {
    std::vector<std::string> out;
    for (auto& word : split_argument_text(text, "test")) out.push_back(word.text);
    return out;
}

struct TempDir {
    std::filesystem::path path;
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "wheelfix-unit-XXXXXX").string();
        path = ::mkdtemp(pattern.data());
    }
    ~TempDir() { std::filesystem::remove_all(path); }
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(path / name, std::ios::binary) << text;
        return (path / name).string();
    }
};

}  // namespace

TEST_CASE("argument files split on blanks and lines, with sh-like quoting") {
    CHECK(words("a b\tc\n\nd\r\n") == std::vector<std::string>{"a", "b", "c", "d"});
    CHECK(words("--set-rpath '$ORIGIN/x y' \"q \\\"u\\\" \\\\ \\n\"") ==
          std::vector<std::string>{"--set-rpath", "$ORIGIN/x y", "q \"u\" \\ \\n"});
    CHECK(words("--set-rpath='$ORIGIN/a b'x") == std::vector<std::string>{"--set-rpath=$ORIGIN/a bx"});
    CHECK(words("a\\ b c\\\nd") == std::vector<std::string>{"a b", "cd"});
    CHECK(words("'' \"\"") == std::vector<std::string>{"", ""});
    CHECK(words("# comment\n  # another\nx#y # tail\n'#z' \\#w") == std::vector<std::string>{"x#y", "#z", "#w"});
    CHECK(words("$ORIGIN ~ *.so") == std::vector<std::string>{"$ORIGIN", "~", "*.so"});
    CHECK_THROWS_AS(split_argument_text("'open", "f"), InputError);
    CHECK_THROWS_AS(split_argument_text("\"open", "f"), InputError);
    auto split = split_argument_text("@a '@b' \\@c", "f");
    CHECK(!split[0].literal);
    CHECK(split[1].literal);
    CHECK(split[2].literal);
}

TEST_CASE("argument files expand recursively, stop at --, refuse loops and missing files") {
    TempDir dir;
    std::string inner = dir.write("inner.args", "--add-needed libx.so '@kept'\n");
    std::string outer = dir.write("outer.args", "relink w.whl # the wheel\n@" + inner + "\n-o out\n");
    CHECK(expand_argument_files({"-v", "@" + outer, "--", "@" + outer}) ==
          std::vector<std::string>{"-v", "relink", "w.whl", "--add-needed", "libx.so", "@kept", "-o", "out", "--",
                                   "@" + outer});
    CHECK(expand_argument_files({"@", "x@y"}) == std::vector<std::string>{"@", "x@y"});
    std::string loop = dir.write("loop.args", "");
    dir.write("loop.args", "@" + loop);
    CHECK_THROWS_AS(expand_argument_files({"@" + loop}), InputError);
    CHECK_THROWS_AS(expand_argument_files({"@" + (dir.path / "missing").string()}), InputError);
}

TEST_CASE("text tables align by visible width and skip trailing blanks") {
    Table table({"member", "n", "note"});
    table.indent(2).align(1, Align::right);
    table.add_row({"a.so", "5", "ok"});
    table.add_row({"long/b.so", "\x1b[1;31m12\x1b[0m", ""});
    table.add_row({"é.so", "7"});
    CHECK(table.render_text() ==
          "  member      n  note\n"
          "  a.so        5  ok\n"
          "  long/b.so  \x1b[1;31m12\x1b[0m\n"
          "  é.so        7\n");
    CHECK(visible_width("\x1b[32myes\x1b[0m") == 3);
    CHECK(strip_ansi("\x1b[32myes\x1b[0m!") == "yes!");
}

TEST_CASE("markdown tables escape pipes and newlines and drop colour") {
    Table table({"k", "v"});
    table.align(1, Align::right);
    table.add_row({"a|b", "\x1b[31mline1\nline2\x1b[0m"});
    CHECK(table.render_markdown() == "| k | v |\n|---|---:|\n| a\\|b | line1<br>line2 |\n");
    Table headless;
    headless.add_row({"x"});
    CHECK(headless.render_markdown() == "| |\n|---|\n| x |\n");
}

TEST_CASE("progress tasks reach the listener with ids, and nothing without one") {
    struct Recorder final : ProgressListener {
        std::vector<std::string> events;
        std::uint64_t next = 0;
        std::uint64_t begin(std::string_view what, std::uint64_t total) override {
            events.push_back("begin " + std::string(what) + " " + std::to_string(total));
            return ++next;
        }
        void advance(std::uint64_t task, std::uint64_t amount) override {
            events.push_back("advance " + std::to_string(task) + " " + std::to_string(amount));
        }
        void end(std::uint64_t task) override { events.push_back("end " + std::to_string(task)); }
    } recorder;
    { ProgressTask quiet("nobody", 10); quiet.advance(5); }
    set_progress_listener(&recorder);
    {
        ProgressTask first("reading", 100);
        first.advance(40);
        ProgressTask second("other", 5);
        second.advance(5);
    }
    set_progress_listener(nullptr);
    CHECK(recorder.events == std::vector<std::string>{"begin reading 100", "advance 1 40", "begin other 5",
                                                       "advance 2 5", "end 2", "end 1"});
}
