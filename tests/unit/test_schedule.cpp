// repair_wheels' OutputClaims (repair/repair.hpp): two inputs of one run with one
// output name — the earlier input in the run's order keeps it, whichever worker
// claims first, as when the inputs run one at a time; inputs of other groups never wait.
#include "wheelfix/repair/repair.hpp"
#include "wheelfix/util/error.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <string>

using namespace wheelfix;

namespace {

// What a claim ends with: "claimed", or the refusal as "file: problem".
std::string claim_outcome(repair::OutputClaims& claims, const char* output, const char* input, std::size_t position) {
    try {
        claims.claim(output, input, position);
        return "claimed";
    } catch (const InputError& error) {
        return error.file() + ": " + error.problem();
    }
}

}  // namespace

TEST_CASE("OutputClaims: the earlier input keeps one output name even when the later one claims first") {
    using namespace std::chrono_literals;
    repair::OutputClaims claims({"pkg", "pkg", "other"});
    // Input 1 gets there first: it waits for input 0, of its group, instead of taking the name.
    auto later = std::async(std::launch::async, [&] { return claim_outcome(claims, "out/pkg.whl", "b/pkg.whl", 1); });
    CHECK(claim_outcome(claims, "out/other.whl", "c/other.whl", 2) == "claimed");  // another group: no wait
    // Still waiting (it cannot go on before input 0 has claimed or ended; a claim that
    // took the name at once would be ready long before this).
    CHECK(later.wait_for(200ms) == std::future_status::timeout);
    CHECK(claim_outcome(claims, "out/pkg.whl", "a/pkg.whl", 0) == "claimed");
    const std::string refused = later.get();
    CHECK(refused.starts_with("b/pkg.whl: out/pkg.whl is also the output of a/pkg.whl in this run"));
}

TEST_CASE("OutputClaims: an earlier input that ends without claiming lets the later one claim") {
    repair::OutputClaims claims({"pkg", "pkg"});
    auto later = std::async(std::launch::async, [&] { return claim_outcome(claims, "out/pkg.whl", "b/pkg.whl", 1); });
    claims.ended(0);  // input 0 failed before naming its output
    CHECK(later.get() == "claimed");
    claims.ended(1);  // ended after claiming: nothing changes
    claims.ended(7);  // not an input of the run: ignored
    CHECK(claim_outcome(claims, "out/pkg.whl", "b/pkg.whl", 1).find("is also the output of b/pkg.whl") != std::string::npos);
}

TEST_CASE("OutputClaims: without an order, first come first served") {
    repair::OutputClaims claims;
    CHECK(claim_outcome(claims, "out/x.whl", "later.whl", 5) == "claimed");
    CHECK(claim_outcome(claims, "out/./x.whl", "earlier.whl", 0).starts_with("earlier.whl: out/./x.whl is also the output of later.whl"));
}
