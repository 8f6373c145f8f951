// Test support: the thread budget (util/thread_budget.hpp) set for a scope, the one
// before restored after it, however the test leaves the scope.
#pragma once

#include "wheelfix/util/thread_budget.hpp"

namespace wheelfix {

class ScopedThreadBudget {
public:
    explicit ScopedThreadBudget(unsigned threads) : before_(thread_budget()) { set_thread_budget(threads); }
    ScopedThreadBudget(const ScopedThreadBudget&) = delete;
    ScopedThreadBudget& operator=(const ScopedThreadBudget&) = delete;
    ~ScopedThreadBudget() { set_thread_budget(before_); }

private:
    unsigned before_;
};

}  // namespace wheelfix
