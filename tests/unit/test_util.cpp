// Unit tests: util (SHA-256 and RECORD's base64, JSON writer, InputError).
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/json.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/text.hpp"
#include "wheelfix/util/parallel_tasks.hpp"
#include "wheelfix/util/thread_budget.hpp"

#include "scoped_thread_budget.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <fstream>
#include <string>

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
