// Unit tests: util (SHA-256 and RECORD's base64, JSON writer, InputError).
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/json.hpp"
#include "wheelfix/util/palette.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/text.hpp"
#include "wheelfix/util/parallel_tasks.hpp"
#include "wheelfix/util/process.hpp"
#include "wheelfix/util/thread_budget.hpp"

#include "scoped_thread_budget.hpp"
#include "../../src/util/sha256_blocks.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <fstream>
#include <string>
#include <vector>

using namespace wheelfix;

namespace {
std::span<const std::uint8_t> bytes_of(std::string_view text) {
    return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}
}  // namespace

TEST_CASE("sha256 and urlsafe base64 match RECORD spelling") {
    // python3 -c "import hashlib,base64;print(base64.urlsafe_b64encode(hashlib.sha256(b'').digest()).rstrip(b'='))"
    CHECK(urlsafe_b64_nopad(sha256(bytes_of(""))) == "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
    CHECK(urlsafe_b64_nopad(sha256(bytes_of("abc"))) == "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
}

TEST_CASE("sha256 gives the same digest whatever the chunking") {
    std::string text(100000, 'x');
    for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>('a' + i % 26);
    Sha256 chunked;
    for (std::size_t i = 0; i < text.size(); i += 777) chunked.update(bytes_of(std::string_view(text).substr(i, 777)));
    CHECK(chunked.digest() == sha256(bytes_of(text)));
}

namespace {
// Deterministic bytes for the hash tests.
std::vector<std::uint8_t> random_bytes(std::size_t count, std::uint32_t seed) {
    std::vector<std::uint8_t> bytes(count);
    std::uint32_t state = seed * 2654435761u + 1;
    for (auto& byte : bytes) {
        state = state * 1664525u + 1013904223u;
        byte = static_cast<std::uint8_t>(state >> 24);
    }
    return bytes;
}

std::array<std::uint8_t, 32> openssl_sha256(std::span<const std::uint8_t> bytes) {
    Sha256 hasher(Sha256::Backend::openssl);
    hasher.update(bytes);
    return hasher.digest();
}
}  // namespace

TEST_CASE("sha256: FIPS 180-4's examples on both backends, and the padding at every length around a block") {
    for (auto backend : {Sha256::Backend::best, Sha256::Backend::openssl}) {
        CAPTURE(static_cast<int>(backend));
        Sha256 two_blocks(backend);
        two_blocks.update(bytes_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"));
        CHECK(hex_digest(two_blocks.digest()) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
        Sha256 million(backend);
        const std::string thousand(1000, 'a');
        for (int i = 0; i < 1000; ++i) million.update(bytes_of(thousand));
        CHECK(hex_digest(million.digest()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    }
    const auto bytes = random_bytes(300, 1);
    for (std::size_t length = 0; length <= bytes.size(); ++length) {
        CAPTURE(length);
        const auto part = std::span<const std::uint8_t>(bytes).first(length);
        REQUIRE(sha256(part) == openssl_sha256(part));
    }
}

TEST_CASE("sha256: update_pair gives each hasher the digest its own updates would, in any chunking") {
    const auto first = random_bytes((std::size_t(1) << 20) + 77, 2);
    const auto second = random_bytes((std::size_t(1) << 20) + 3, 3);
    const auto first_digest = openssl_sha256(first), second_digest = openssl_sha256(second);
    // Chunk sizes that put the two streams at different offsets within a block,
    // and chunks of nothing on either side.
    const std::vector<std::pair<std::size_t, std::size_t>> steps = {
        {4 << 20, 4 << 20}, {64, 64}, {65, 63}, {1, 4096}, {4096 + 5, 4096 - 7}, {0, 1000}, {1000, 0}, {100003, 99991}};
    for (auto backend : {Sha256::Backend::best, Sha256::Backend::openssl}) {
        for (const auto& [first_step, second_step] : steps) {
            CAPTURE(first_step);
            CAPTURE(second_step);
            Sha256 one(backend), two;
            std::size_t at_one = 0, at_two = 0;
            while (at_one < first.size() || at_two < second.size()) {
                const std::size_t take_one = std::min(first_step, first.size() - at_one);
                const std::size_t take_two = std::min(second_step, second.size() - at_two);
                Sha256::update_pair(one, std::span(first).subspan(at_one, take_one), two,
                                    std::span(second).subspan(at_two, take_two));
                at_one += take_one;
                at_two += take_two;
                if (take_one == 0 && take_two == 0) {  // a side that takes nothing: the other finishes alone
                    one.update(std::span(first).subspan(at_one));
                    two.update(std::span(second).subspan(at_two));
                    at_one = first.size();
                    at_two = second.size();
                }
            }
            CHECK(one.digest() == first_digest);
            CHECK(two.digest() == second_digest);
        }
    }
}

TEST_CASE("sha256_blocks: two streams interleaved give the chaining words each gives alone") {
    if (!sha256_blocks::available()) {
        MESSAGE("this CPU has no SHA extensions: OpenSSL hashes everything (the tests above cover it)");
        return;
    }
    const auto first = random_bytes(64 * 1000, 4), second = random_bytes(64 * 1000, 5);
    std::uint32_t alone_one[8], alone_two[8], paired_one[8], paired_two[8];
    for (int i = 0; i < 8; ++i) alone_one[i] = alone_two[i] = paired_one[i] = paired_two[i] = 0x01020304u * (i + 1);
    alone_two[3] = paired_two[3] = 7;  // the two streams start from different states
    sha256_blocks::compress(alone_one, first.data(), 1000);
    sha256_blocks::compress(alone_two, second.data(), 1000);
    sha256_blocks::compress_pair(paired_one, first.data(), paired_two, second.data(), 1000);
    CHECK(std::equal(std::begin(alone_one), std::end(alone_one), std::begin(paired_one)));
    CHECK(std::equal(std::begin(alone_two), std::end(alone_two), std::begin(paired_two)));
    CHECK(!std::equal(std::begin(alone_one), std::end(alone_one), std::begin(alone_two)));
}

TEST_CASE("urlsafe base64 round-trips every tail length") {
    for (std::string text : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "\xff\xfe\xfd"}) {
        std::string decoded;
        REQUIRE(urlsafe_b64_decode(urlsafe_b64_nopad(bytes_of(text)), decoded));
        CHECK(decoded == text);
    }
    std::string out;
    CHECK_FALSE(urlsafe_b64_decode("ab+/", out));  // the standard alphabet is not RECORD's
    CHECK(urlsafe_b64_nopad(bytes_of("\xfb\xff")) == "-_8");
}

TEST_CASE("json writer nests, escapes and keeps stray bytes valid") {
    JsonWriter json;
    json.begin_object().field("schema", "x/1").key("list").begin_array().value(1).value(true).null().end_array();
    json.field("text", std::string("a\"b\\c\n\x01\xff")).key("empty").begin_object().end_object().end_object();
    CHECK(json.str() ==
          "{\n  \"schema\": \"x/1\",\n  \"list\": [\n    1,\n    true,\n    null\n  ],\n"
          "  \"text\": \"a\\\"b\\\\c\\n\\u0001\\u00ff\",\n  \"empty\": {}\n}\n");
}

TEST_CASE("InputError is one line naming the file") {
    InputError error("w.whl", "bad\nthing");
    CHECK(std::string(error.what()) == "w.whl: bad thing");
    CHECK(std::string(InputError("x.so", "truncated").within("w.whl").what()) == "w.whl: x.so: truncated");
}

TEST_CASE("refuse_existing_output: nothing is replaced without --overwrite") {
    namespace fs = std::filesystem;
    std::string pattern = (fs::temp_directory_path() / "wheelfix-util-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    fs::path dir = pattern;
    CHECK_NOTHROW(refuse_existing_output(dir / "new.whl", false));
    std::ofstream(dir / "old.whl") << "x";
    try {
        refuse_existing_output(dir / "old.whl", false);
        FAIL("no InputError");
    } catch (const InputError& error) {
        CHECK(error.file() == (dir / "old.whl").string());
        CHECK(error.problem() == "already exists; pass --overwrite to replace it");
    }
    CHECK_NOTHROW(refuse_existing_output(dir / "old.whl", true));
    fs::create_symlink(dir / "nowhere", dir / "dangling.whl");  // a dangling link exists too
    CHECK_THROWS_AS(refuse_existing_output(dir / "dangling.whl", false), InputError);
    CHECK_THROWS_AS(refuse_existing_output(dir, true), InputError);  // a directory is never replaced
    fs::remove_all(dir);
}

TEST_CASE("split_nonempty: the parts between separators, empty ones left out") {
    CHECK(split_nonempty("$ORIGIN/../lib::/opt/x:", ':') == std::vector<std::string>{"$ORIGIN/../lib", "/opt/x"});
    CHECK(split_nonempty("a,b,c", ',') == std::vector<std::string>{"a", "b", "c"});
    CHECK(split_nonempty("", ':').empty());
    CHECK(split_nonempty(":::", ':').empty());
    CHECK(split_nonempty("one", '/') == std::vector<std::string>{"one"});
}

TEST_CASE("split: every part between separators, empty ones kept") {
    CHECK(split("a::b:", ':') == std::vector<std::string>{"a", "", "b", ""});
    CHECK(split("manylinux_2_17_x86_64.manylinux2014_x86_64", '.') ==
          std::vector<std::string>{"manylinux_2_17_x86_64", "manylinux2014_x86_64"});
    CHECK(split("", ':') == std::vector<std::string>{""});
    CHECK(split("one", '/') == std::vector<std::string>{"one"});
}

TEST_CASE("edit_distance: insertions, deletions, substitutions and adjacent transpositions cost one each") {
    CHECK(edit_distance("retag", "retag") == 0);
    CHECK(edit_distance("retag", "ertag") == 1);  // transposition
    CHECK(edit_distance("inspect", "inspct") == 1);
    CHECK(edit_distance("shim", "shin") == 1);
    CHECK(edit_distance("", "abc") == 3);
    CHECK(edit_distance("ca", "abc") == 3);  // optimal string alignment: no substring edited twice
}

TEST_CASE("run_process: stdout collected, exit status, environment, cap, time limit, group killed") {
    using namespace std::chrono_literals;
    ProcessOptions quiet;
    quiet.discard_stderr = true;
    ProcessResult echoed = run_process({"/bin/sh", "-c", "printf 'a\\nb'; echo oops >&2; exit 3"}, quiet);
    CHECK(echoed.output == "a\nb");
    CHECK(echoed.exit_status == 3);
    CHECK_FALSE(echoed.timed_out);

    ::setenv("WHEELFIX_TEST_DROPPED", "x", 1);
    ProcessOptions changed;
    changed.drop_environment = {"WHEELFIX_TEST_DROPPED"};
    changed.add_environment = {"WHEELFIX_TEST_ADDED=y"};
    ProcessResult environment =
        run_process({"/bin/sh", "-c", "echo \"${WHEELFIX_TEST_DROPPED-unset} $WHEELFIX_TEST_ADDED\""}, changed);
    ::unsetenv("WHEELFIX_TEST_DROPPED");
    CHECK(environment.output == "unset y\n");

    ProcessOptions small;
    small.max_output = 10;
    ProcessResult capped = run_process({"/bin/sh", "-c", "head -c 100000 /dev/zero"}, small);
    CHECK(capped.output.size() == 10);
    CHECK(capped.exit_status == 0);  // the rest was read and dropped: the writer never blocked

    // The child forks a grandchild that holds stdout open: both are killed at the limit.
    const auto start = std::chrono::steady_clock::now();
    ProcessOptions brief;
    brief.limit = 300ms;
    ProcessResult slow = run_process({"/bin/sh", "-c", "echo started; sleep 30 & sleep 30"}, brief);
    CHECK(slow.timed_out);
    CHECK_FALSE(slow.exit_status);
    CHECK(slow.output == "started\n");
    CHECK(std::chrono::steady_clock::now() - start < 10s);

    CHECK_THROWS_AS(run_process({"/nonexistent/program"}), InputError);
}

TEST_CASE("thread budget: helpers get the shares nobody holds, workers always get theirs") {
    const unsigned before = thread_budget();
    CHECK(before >= 1);
    set_thread_budget(3);  // this thread holds one share, two are spare
    {
        auto first = try_claim_thread();
        auto second = try_claim_thread();
        CHECK(first.has_value());
        CHECK(second.has_value());
        CHECK_FALSE(try_claim_thread().has_value());  // spent
        second.reset();                              // a helper ends: its share is back at once
        CHECK(try_claim_threads(5).size() == 1);     // the claims die with the vector
        {
            ThreadLoan waiting;  // this thread waits: its share is lent
            CHECK(try_claim_threads(5).size() == 2);
        }
        auto worker = claim_thread();  // counted by its caller: granted though the budget is spent
        CHECK_FALSE(try_claim_thread().has_value());
        auto moved = std::move(worker);  // a moved claim is returned once, by its last holder
    }
    CHECK(try_claim_threads(5).size() == 2);  // every share is back
    set_thread_budget(1);
    CHECK_FALSE(try_claim_thread().has_value());
    set_thread_budget(before);
    CHECK(thread_budget() == before);
    CHECK(usable_cpus() >= 1);
}

TEST_CASE("run_tasks: every task once, results in their slots, the same at every budget") {
    const std::vector<std::uint64_t> weights{3, 900, 1, 40, 40, 7, 0, 512};
    for (unsigned budget : {1u, 2u, 4u}) {
        CAPTURE(budget);
        const ScopedThreadBudget scoped(budget);
        std::vector<std::uint64_t> results(weights.size(), 0);
        std::vector<std::atomic<int>> runs(weights.size());
        std::mutex mutex;
        std::set<std::thread::id> threads;
        const TaskRun run = run_tasks(weights, [&](std::size_t i) {
            ++runs[i];
            results[i] = weights[i] * 2 + i;
            const std::lock_guard lock(mutex);
            threads.insert(std::this_thread::get_id());
        });
        for (std::size_t i = 0; i < weights.size(); ++i) {
            CHECK(runs[i] == 1);
            CHECK(results[i] == weights[i] * 2 + i);
        }
        CHECK(run.started_all);
        CHECK(run.threads == std::min<std::size_t>(budget, weights.size()));
        CHECK(threads.size() <= run.threads);
        CHECK(try_claim_threads(8).size() == budget - 1);  // every helper's share is back
    }
}

TEST_CASE("run_tasks: alone, in index order; with helpers, the heaviest task is taken first") {
    const std::vector<std::uint64_t> weights{1, 2, 3, 50, 4};
    {
        const ScopedThreadBudget scoped(1);
        std::vector<std::size_t> order;
        run_tasks(weights, [&](std::size_t i) { order.push_back(i); });
        CHECK(order == std::vector<std::size_t>{0, 1, 2, 3, 4});
    }
    {
        const ScopedThreadBudget scoped(2);
        std::atomic<std::size_t> first{SIZE_MAX};
        std::atomic<bool> heavy_started{false};
        run_tasks(weights, [&](std::size_t i) {
            std::size_t none = SIZE_MAX;
            first.compare_exchange_strong(none, i);
            if (i == 3) heavy_started = true;
            // Every light task waits until the heavy one has started: it was taken first.
            while (i != 3 && !heavy_started) std::this_thread::yield();
        });
        CHECK(heavy_started);
    }
}

TEST_CASE("run_tasks: a failure rethrows what a plain loop in index order would have thrown") {
    for (unsigned budget : {1u, 2u, 3u}) {
        CAPTURE(budget);
        const ScopedThreadBudget scoped(budget);
        const std::vector<std::uint64_t> weights{1, 1, 1, 100, 1, 1};
        std::vector<std::atomic<int>> runs(weights.size());
        std::string thrown;
        try {
            run_tasks(weights, [&](std::size_t i) {
                ++runs[i];
                if (i == 1 || i == 3) throw std::runtime_error("task " + std::to_string(i));
            });
        } catch (const std::runtime_error& error) {
            thrown = error.what();
        }
        CHECK(thrown == "task 1");
        CHECK(runs[0] == 1);  // below the failure: always run
        CHECK(runs[1] == 1);
        if (budget == 1) CHECK(runs[2] + runs[3] + runs[4] + runs[5] == 0);  // a plain loop stops at task 1
        CHECK(runs[4] + runs[5] <= 2);
        CHECK(try_claim_threads(8).size() == budget - 1);
    }
}

TEST_CASE("run_tasks: TaskStop skips the tasks from an index on, and says so") {
    for (unsigned budget : {1u, 2u}) {
        CAPTURE(budget);
        const ScopedThreadBudget scoped(budget);
        const std::vector<std::uint64_t> weights(10, 1);
        std::vector<std::atomic<int>> runs(weights.size());
        const TaskRun run = run_tasks(weights, [&](std::size_t i, TaskStop& stop) {
            ++runs[i];
            if (i == 2) stop.stop_from(0);
        });
        CHECK_FALSE(run.started_all);
        CHECK(runs[2] == 1);
        int ran = 0;
        for (auto& count : runs) ran += count;
        // Equal weights go in index order: tasks 0-2, and what the helpers had started already.
        CHECK(ran >= 3);
        CHECK(ran <= 2 + static_cast<int>(budget));
    }
    const ScopedThreadBudget scoped(2);
    CHECK(run_tasks(std::vector<std::uint64_t>{}, [](std::size_t) { FAIL("no task"); }).started_all);
}

TEST_CASE("trim drops ASCII white space at both ends; ascii_lower lowers A-Z only") {
    CHECK(trim(" \t2.10.0\r\n") == "2.10.0");
    CHECK(trim("a b") == "a b");
    CHECK(trim(" \v\f ").empty());
    CHECK(trim("").empty());
    CHECK(ascii_lower("Torch-2.10.0+CU130") == "torch-2.10.0+cu130");
    CHECK(ascii_lower("\xC3\x89") == "\xC3\x89");  // UTF-8 bytes stay as they are
}

TEST_CASE("all_digits: one or more of 0-9; after_origin: what follows $ORIGIN or ${ORIGIN}") {
    CHECK(all_digits("2026"));
    CHECK_FALSE(all_digits(""));
    CHECK_FALSE(all_digits("12a"));
    CHECK(after_origin("$ORIGIN/../lib") == std::optional<std::string_view>("/../lib"));
    CHECK(after_origin("${ORIGIN}") == std::optional<std::string_view>(""));
    CHECK_FALSE(after_origin("/opt/lib/$ORIGIN"));
    CHECK_FALSE(after_origin("{ORIGIN}/lib"));
}

TEST_CASE("base_name is what follows the last slash") {
    CHECK(base_name("torch/lib/libc10.so") == "libc10.so");
    CHECK(base_name("libc10.so") == "libc10.so");
    CHECK(base_name("dir/") == "");
    CHECK(base_name("/usr/bin/patchelf") == "patchelf");
}

TEST_CASE("human_size in binary units, and a Palette that colours only when enabled") {
    CHECK(human_size(812) == "812 B");
    CHECK(human_size(2048) == "2.0 KiB");
    CHECK(human_size(std::uint64_t(541) * 1024 * 1024 + 200 * 1024) == "541.2 MiB");
    CHECK(human_size(std::uint64_t(5) * 1024 * 1024 * 1024 / 4) == "1.25 GiB");
    CHECK(Palette(false).bad("NO") == "NO");
    CHECK(Palette(true).bad("NO") == "\x1b[1;31mNO\x1b[0m");
    CHECK(Palette(true).good("yes") == "\x1b[32myes\x1b[0m");
    CHECK(Palette(true).strong("") == "");
}
