// fourdgs/detail/findings.hpp — where a step of the read side puts the rules a file breaks, so
// that each rule is written once for the readers and the validator.
//
// A step that checks rules takes a Findings. A reader's (the default) holds the first refusal,
// and the step stops there and returns it: the reader refuses the file as it always has. The
// validator's sends each refusal to its ReportFn and the step goes on past it, where going on is
// safe, for as long as the ReportFn says so: the validator reports every rule a reader refuses
// by, in the reader's words, because it runs the reader's own step.
//
// It is the library's one answer to "stop at the first refusal or collect them": the index check,
// the summary walk, SceneBuilder's front-matter rules (its first-error and collect modes are a
// reader's and the validator's Findings) and check_scene_references all take one.
//
//     if (!findings.take(error)) return findings.outcome();  // a rule broken, in a step
//     ...
//     return findings.outcome();                               // the step's end
#pragma once

#include <optional>
#include <utility>

#include "fourdgs/error.hpp"

namespace fourdgs::detail {

class Findings {
public:
    // A reader's: the first refusal ends the step.
    Findings() = default;
    // The validator's: each refusal goes to `report`, and the step goes on while it returns true.
    // An empty `report` makes a reader's.
    explicit Findings(ReportFn report) : report_(std::move(report)) {}

    bool collecting() const noexcept { return static_cast<bool>(report_); }
    // Whether the step has stopped: outcome() holds the refusal it stopped at.
    bool stopped() const noexcept { return first_.has_value(); }

    // Takes refusal `e`: true when the step goes on past it, false when it stops (a reader's
    // first refusal, or the ReportFn said stop); then outcome() holds `e`.
    bool take(Error e) {
        if (first_) return false;
        if (report_ && report_(e)) return true;
        first_ = std::move(e);
        return false;
    }
    // Status overload: an ok status goes on.
    bool take(const Status& s) { return s.ok() || take(s.error()); }

    // What the step returns: the refusal it stopped at, or ok.
    Status outcome() const {
        if (first_) return *first_;
        return ok_status();
    }

private:
    ReportFn report_;
    std::optional<Error> first_;
};

}  // namespace fourdgs::detail
