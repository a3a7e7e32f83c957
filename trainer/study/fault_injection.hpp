// Fault injection for the reliability tests (docs/reliability.md): a rank named by an
// environment variable misbehaves on purpose. Unset in every real measurement; a set value is
// announced on stderr when first read, so it cannot go unnoticed in a log.
#pragma once

namespace ddpscale {

// The rank in `variable`, or -1 when it is unset or not a rank (then said on stderr).
// `effect` completes the announcement: "DDPSCALE_X=R <effect>".
int fault_injection_rank(const char* variable, const char* effect);

}  // namespace ddpscale
