#include "canaries/trace_buffer.hpp"

#include "canaries/trace_file.hpp"

#include <unistd.h>

namespace canaries {

TraceBuffer::TraceBuffer(std::size_t capacity) : slots_(capacity) {}

bool TraceBuffer::push(const TraceRecord& r) {
  if (size_ == slots_.size()) {
    ++not_recorded_;
    return false;
  }
  slots_[size_++] = r;
  if (journal_fd_ >= 0) {
    unsigned char bytes[kTraceRecordBytes];
    encode_record(r, bytes);
    if (::write(journal_fd_, bytes, sizeof bytes) != static_cast<ssize_t>(sizeof bytes)) ++journal_errors_;
  }
  return true;
}

}  // namespace canaries
