// Unit tests: torch's stable C ABI version list (abi/stable_versions.hpp). The embedded
// copy parses whole and states what torch's file states for known functions; any other
// line is refused naming it.
#include "wheelfix/abi/stable_versions.hpp"
#include "wheelfix/util/error.hpp"

#include <doctest/doctest.h>

using namespace wheelfix;

TEST_CASE("stable ABI versions: the embedded list parses and states the known releases") {
    CHECK(abi::stable_abi_versions().size() == 108);
    CHECK(abi::stable_abi_since("torch_library_impl") == "2.10.0");
    CHECK(abi::stable_abi_since("torch_from_blob") == "2.11.0");
    CHECK(abi::stable_abi_since("torch_tag_core") == "2.12.0");
    CHECK(abi::stable_abi_since("torch_stream_native_handle") == "2.13.0");
    CHECK_FALSE(abi::stable_abi_since("aoti_torch_empty_strided").has_value());  // before 2.10.0
}

TEST_CASE("stable ABI versions: other lines are refused naming the line") {
    const auto parsed = abi::parse_stable_abi_versions("# c\n\nf: TORCH_VERSION_2_10_0\r\ng : TORCH_VERSION_12_1_10\n", "x");
    REQUIRE(parsed.size() == 2);
    CHECK(parsed[1].name == "g");
    CHECK(parsed[1].release == "12.1.10");
    for (const char* bad : {"f TORCH_VERSION_2_10_0\n", "f: TORCH_VERSION_2_10\n", "f: 2.10.0\n",
                            "f: TORCH_VERSION_2_10_0_1\n", "f-g: TORCH_VERSION_2_10_0\n", "f: TORCH_VERSION_2__0\n",
                            "f: TORCH_VERSION_2_10_0\nf: TORCH_VERSION_2_11_0\n"}) {
        INFO(bad);
        CHECK_THROWS_AS(abi::parse_stable_abi_versions(bad, "x"), InputError);
    }
    try {
        abi::parse_stable_abi_versions("\n# c\nf: TORCH_VERSION_2_10\n", "versions.txt");
        FAIL("accepted");
    } catch (const InputError& error) {
        CHECK(std::string(error.what()).find("line 3") != std::string::npos);
    }
}
