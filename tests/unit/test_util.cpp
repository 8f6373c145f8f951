// Unit tests: util (SHA-256 and RECORD's base64, JSON writer, InputError).
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/json.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/text.hpp"
#include "wheelfix/util/thread_budget.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
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
