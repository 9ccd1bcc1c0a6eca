// Where one role of the sm90 kernel stands on its stage ring (pipeline.cuh): the stage of its next
// K step, and the parity of that use's phase, which the mbarrier waits name. Host and device; the
// host tests walk it against a model of the ring.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"

namespace tilegemm::sm90 {

template <int kStages>
struct PipelineState {
  int stage = 0;
  uint32_t phase = 0;

  // Where a role stands after `steps` K steps from the ring's start: a ping-pong consumer starts
  // each of its tiles there, past the other consumer's steps.
  TILEGEMM_HOST_DEVICE static constexpr PipelineState after(int64_t steps) {
    return {int(steps % kStages), uint32_t(steps / kStages) & 1u};
  }
  // The stage of the K step `steps` before the next one (at most kStages).
  TILEGEMM_HOST_DEVICE constexpr int behind(int steps) const {
    return stage >= steps ? stage - steps : stage - steps + kStages;
  }
  TILEGEMM_HOST_DEVICE constexpr void advance() {
    if (++stage == kStages) stage = 0, phase ^= 1;
  }
};

}  // namespace tilegemm::sm90
