// Shared by the libFuzzer targets in this directory (fuzz/README.md).
//
// Contract: a target calls the code under test inside expect_clean<Allowed...>():
// an exception of one of the Allowed types is the clean refusal the module's
// contract promises and ends the run quietly; any other exception is a bug and
// aborts, so libFuzzer records the input as a crash (ASan/UBSan reports and
// libFuzzer's malloc/timeout limits catch the rest). The message must be one line
// (for an InputError: its problem; the file is the user's own name). fuzz_bug() aborts with a
// message for a broken invariant. InputFile gives code that wants a path a real
// file holding the input (on /dev/shm when present, else $TMPDIR), rewritten for
// every run and removed when the process exits.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <typeinfo>

#include <unistd.h>

#include "wheelfix/util/error.hpp"

namespace wheelfix::fuzz {

[[noreturn]] inline void fuzz_bug(const std::string& what) {
    std::fprintf(stderr, "wheelfix fuzz: invariant broken: %s\n", what.c_str());
    std::fflush(stderr);
    std::abort();
}

template <typename... Allowed, typename Body>
void expect_clean(Body&& body) {
    try {
        body();
    } catch (const std::exception& error) {
        if ((dynamic_cast<const Allowed*>(&error) || ...)) {
            // The user's own file name may hold anything; the problem must be one line.
            auto input_error = dynamic_cast<const InputError*>(&error);
            if ((input_error ? input_error->problem() : std::string(error.what())).find('\n') != std::string::npos)
                fuzz_bug(std::string("error message spans several lines: ") + error.what());
            return;
        }
        fuzz_bug(std::string("unexpected exception ") + typeid(error).name() + ": " + error.what());
    }
}

// Optional: saving what a target produced (WHEELFIX_FUZZ_SAVE=DIR), for checks that
// must not run inside the fuzzer (readelf over edited files: tests/e2e).
inline const char* save_directory() {
    static const char* directory = std::getenv("WHEELFIX_FUZZ_SAVE");
    return directory;
}

class InputFile {
public:
    explicit InputFile(const std::string& file_name) {
        const char* shm = "/dev/shm";
        std::filesystem::path base = std::filesystem::is_directory(shm) ? std::filesystem::path(shm)
                                                                          : std::filesystem::temp_directory_path();
        directory_ = base / ("wheelfix-fuzz-" + std::to_string(::getpid()));
        std::filesystem::create_directories(directory_);
        path_ = directory_ / file_name;
    }
    ~InputFile() {
        std::error_code ignored;
        std::filesystem::remove_all(directory_, ignored);
    }
    const std::filesystem::path& write(std::span<const std::uint8_t> bytes) {
        std::ofstream out(path_, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        if (!out) fuzz_bug("cannot write the input file " + path_.string());
        return path_;
    }

private:
    std::filesystem::path directory_;
    std::filesystem::path path_;
};

}  // namespace wheelfix::fuzz
