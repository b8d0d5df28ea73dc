#include "canaries/trace_buffer.hpp"

namespace canaries {

TraceBuffer::TraceBuffer(std::size_t capacity) : slots_(capacity) {}

bool TraceBuffer::push(const TraceRecord& r) {
  if (size_ == slots_.size()) {
    ++not_recorded_;
    return false;
  }
  slots_[size_++] = r;
  return true;
}

}  // namespace canaries
