// Test support for the zip and wheel tests: where the real (auditwheel) wheels are,
// a self-removing temporary directory, raw file bytes, a libzip writer for
// hand-made archives, and a builder for small, correct wheels that tests then
// damage one way at a time.
#pragma once

#include "wheelfix/util/error.hpp"
#include "wheelfix/wheel/record.hpp"

#include <doctest/doctest.h>
#include <zip.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace wheelfix::test {

namespace fs = std::filesystem;

// The InputError an action throws; fails the test when it throws none.
template <typename Action>
InputError error_from(Action action) {
    try {
        action();
    } catch (const InputError& error) {
        return error;
    }
    FAIL("no InputError thrown");
    return InputError("", "");
}

// tests/data/auditwheel: auditwheel's bundled wheels, committed.
inline fs::path auditwheel_dir() { return fs::path(WHEELFIX_TEST_DATA) / "auditwheel"; }

// Every *.whl under auditwheel_dir() (top level, glibc/, musllinux_1_2/), sorted.
inline std::vector<fs::path> auditwheel_wheels() {
    std::vector<fs::path> wheels;
    for (const auto& entry : fs::recursive_directory_iterator(auditwheel_dir()))
        if (entry.is_regular_file() && entry.path().extension() == ".whl") wheels.push_back(entry.path());
    std::sort(wheels.begin(), wheels.end());
    return wheels;
}

class TempDir {
public:
    TempDir() {
        std::string pattern = (fs::temp_directory_path() / "wheelfix-test-XXXXXX").string();
        if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const fs::path& path() const { return path_; }
    fs::path operator/(const std::string& name) const { return path_ / name; }

private:
    fs::path path_;
};

inline std::string read_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_bytes(const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    REQUIRE(out.good());
}

// Replaces the only occurrence of `from` in a file with `to` (same length): how
// tests forge names libzip will not write (duplicates, NUL bytes).
inline void patch_file(const fs::path& path, const std::string& from, const std::string& to, int expected_count = 1) {
    REQUIRE(from.size() == to.size());
    auto bytes = read_bytes(path);
    int count = 0;
    for (auto at = bytes.find(from); at != std::string::npos; at = bytes.find(from, at + 1), ++count)
        bytes.replace(at, from.size(), to);
    REQUIRE(count == expected_count);
    write_bytes(path, bytes);
}

struct ZipEntry {
    ZipEntry(std::string name, std::string data, zip_int32_t method = ZIP_CM_DEFLATE,
             std::optional<std::uint32_t> unix_mode = {}, std::optional<time_t> mtime = {}, bool encrypt = false)
        : name(std::move(name)), data(std::move(data)), method(method), unix_mode(unix_mode), mtime(mtime),
          encrypt(encrypt) {}

    std::string name;
    std::string data;
    zip_int32_t method;
    std::optional<std::uint32_t> unix_mode;  // st_mode, e.g. S_IFREG | 0755
    std::optional<time_t> mtime;
    bool encrypt;
};

// Writes the entries with libzip, in order ("name/" with empty data is a directory).
inline void write_zip(const fs::path& path, const std::vector<ZipEntry>& entries) {
    int error = 0;
    zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
    REQUIRE(archive != nullptr);
    for (const auto& entry : entries) {
        zip_int64_t index = -1;
        if (!entry.name.empty() && entry.name.back() == '/') {
            index = zip_dir_add(archive, entry.name.c_str(), ZIP_FL_ENC_UTF_8);
        } else {
            zip_source_t* source = zip_source_buffer(archive, entry.data.data(), entry.data.size(), 0);
            REQUIRE(source != nullptr);
            index = zip_file_add(archive, entry.name.c_str(), source, ZIP_FL_ENC_UTF_8);
            REQUIRE(zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), entry.method, 0) == 0);
        }
        REQUIRE_MESSAGE(index >= 0, zip_strerror(archive));
        auto at = static_cast<zip_uint64_t>(index);
        if (entry.unix_mode)
            REQUIRE(zip_file_set_external_attributes(archive, at, 0, ZIP_OPSYS_UNIX, *entry.unix_mode << 16) == 0);
        if (entry.mtime) REQUIRE(zip_file_set_mtime(archive, at, *entry.mtime, 0) == 0);
        if (entry.encrypt) REQUIRE(zip_file_set_encryption(archive, at, ZIP_EM_AES_256, "secret") == 0);
    }
    REQUIRE_MESSAGE(zip_close(archive) == 0, zip_strerror(archive));
}

// A small wheel that verifies clean until a test changes one thing.
struct WheelBuilder {
    std::string filename = "demo_pkg-1.0-cp310-cp310-linux_x86_64.whl";
    std::string dist_info = "demo_pkg-1.0.dist-info";
    std::string metadata = "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\nRequires-Dist: numpy\n\nA body.\n";
    std::string wheel = "Wheel-Version: 1.0\nGenerator: wheelfix-test\nRoot-Is-Purelib: false\n"
                        "Tag: cp310-cp310-linux_x86_64\n\n";
    // Stored (not deflated), so that a test can find and flip their bytes in the file.
    std::vector<std::pair<std::string, std::string>> files{
        {"demo_pkg/__init__.py", "from .core import answer\n"},
        {"demo_pkg/core.py", "def answer():\n    return 42  # stored member payload\n"},
    };
    std::vector<std::string> directories{"demo_pkg/"};
    bool record_lists_itself = true;
    std::function<void(std::vector<wheel::RecordEntry>&)> edit_record;  // tampering hook
    std::function<void(std::vector<ZipEntry>&)> edit_members;           // after RECORD is made

    fs::path write(const fs::path& dir) const {
        std::vector<ZipEntry> members;
        for (const auto& name : directories) members.push_back({name, "", ZIP_CM_STORE, 040755u});
        for (const auto& [name, data] : files) members.push_back({name, data, ZIP_CM_STORE, 0100644u});
        members.push_back({dist_info + "/METADATA", metadata, ZIP_CM_DEFLATE, 0100644u});
        members.push_back({dist_info + "/WHEEL", wheel, ZIP_CM_DEFLATE, 0100644u});

        std::vector<wheel::RecordEntry> record;
        for (const auto& member : members) {
            if (member.name.back() == '/') continue;
            record.push_back({member.name, "sha256", wheel::record_hash_sha256(member.data).substr(7),
                              member.data.size(), 0});
        }
        if (record_lists_itself) record.push_back({dist_info + "/RECORD", "", "", std::nullopt, 0});
        if (edit_record) edit_record(record);
        members.push_back({dist_info + "/RECORD", wheel::format_record(record), ZIP_CM_DEFLATE, 0100644u});
        if (edit_members) edit_members(members);

        auto path = dir / filename;
        write_zip(path, members);
        return path;
    }
};

}  // namespace wheelfix::test
