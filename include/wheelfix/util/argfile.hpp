// Argument files, as gcc, ld and javac users know them: a command-line argument
// "@FILE" stands for the arguments written in FILE. Long option lists (many
// --replace-needed, --exclude or --torch) go in a file that CI keeps beside the
// job, and `--set-rpath @rpath.txt` passes a value that lives in a file.
//
// Contract:
// - split_argument_text(text, source) cuts a file's text into arguments:
//   * arguments are separated by blanks (space, tab, newline, CR);
//   * '#' at the start of an argument begins a comment that runs to the end of
//     the line (write '\#' or quote it for a literal '#');
//   * '...' keeps everything up to the next ' literally (blanks, '#', '\', '"');
//   * "..." keeps everything up to the next unescaped ", where \" is a '"' and
//     \\ is a '\' (any other backslash stays as written);
//   * outside quotes a backslash takes the next character literally ("a\ b" is
//     one argument "a b"); a backslash before a newline joins the lines;
//   * quoted and unquoted parts next to each other form one argument
//     (--set-rpath='$ORIGIN/x y'); '' or "" alone is one empty argument;
//   * nothing is expanded: $ORIGIN, ~ and * reach wheelfix as written.
//   An unterminated quote is an InputError(source, ...). An argument whose first
//   character was quoted or escaped ('@x', \@x) is `literal`: never expanded.
// - expand_argument_files(arguments) replaces every argument "@FILE" (FILE not
//   empty) by the arguments FILE holds, themselves expanded the same way (a
//   relative FILE inside a file is relative to the current directory, as gcc
//   does), at most 16 files deep, which also stops a file that names itself, and
//   at most 256 files read in all (files that name each other twice each would
//   otherwise fan out to 2^16 reads), expanding to arguments of at most 64 MiB in
//   all (each counted with a std::string's size: memory is bounded, not how many
//   wheels a file names). FILE must be a regular file of at most 32 MiB (util/files.hpp: @/dev/zero or an @FIFO
//   is refused without being read). Arguments after a lone "--" are kept as
//   written; "@" alone is kept. A missing, unreadable or refused FILE, or a limit
//   passed, is InputError("@FILE", reason). To pass an argument that
//   starts with '@' itself: quote it inside an argument file, put it after "--",
//   or spell a path another way (./@name).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wheelfix {

struct ArgumentWord {
    std::string text;
    bool literal = false;  // its first character was quoted or escaped
};

std::vector<ArgumentWord> split_argument_text(std::string_view text, const std::string& source);
std::vector<std::string> expand_argument_files(const std::vector<std::string>& arguments);

}  // namespace wheelfix
