// A main() for the fuzz targets outside libFuzzer: runs LLVMFuzzerTestOneInput once
// on every file named (directories: every file in them, sorted). The default and
// asan builds link each target with this into fuzz_replay_<target>, and ctest
// replays tests/data/fuzz-regressions/<target>/ and fuzz/seeds/<target>/ through it
// (fuzz/CMakeLists.txt): an input that once crashed must now pass.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

int replay(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.eof() && in.fail()) {
        std::fprintf(stderr, "cannot read %s\n", file.c_str());
        return 1;
    }
    // An exact-size heap copy, as libFuzzer hands it over: ASan sees reads past the end.
    auto copy = std::make_unique<std::uint8_t[]>(bytes.size());
    std::copy(bytes.begin(), bytes.end(), copy.get());
    LLVMFuzzerTestOneInput(copy.get(), bytes.size());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    std::vector<std::filesystem::path> files;
    for (int i = 1; i < argc; ++i) {
        std::filesystem::path path(argv[i]);
        if (std::filesystem::is_directory(path)) {
            for (const auto& entry : std::filesystem::directory_iterator(path))
                if (entry.is_regular_file()) files.push_back(entry.path());
        } else if (std::filesystem::exists(path)) {
            files.push_back(path);
        }
    }
    std::sort(files.begin(), files.end());
    int failures = 0;
    for (const auto& file : files) failures += replay(file);
    std::printf("replayed %zu inputs\n", files.size());
    return failures == 0 ? 0 : 1;
}
