#include "fake_provider/journal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "scenarios/redact.h"

namespace faultline::provider {

std::string_view ToString(EndKind kind) {
  switch (kind) {
    case EndKind::kInProgress:
      return "in_progress";
    case EndKind::kCompleted:
      return "completed";
    case EndKind::kClosedByServer:
      return "closed_by_server";
    case EndKind::kResetByServer:
      return "reset_by_server";
    case EndKind::kClientClosed:
      return "client_closed";
    case EndKind::kStalledClientGaveUp:
      return "stalled_client_gave_up";
    case EndKind::kServerShutdown:
      return "server_shutdown";
    case EndKind::kWriteFailed:
      return "write_failed";
  }
  return "unknown";
}

std::string RedactedSecret(std::string_view value) {
  constexpr std::size_t kShown = 4;
  constexpr std::size_t kShowFrom = 12;  // shorter credentials show nothing
  std::string_view scheme;
  std::string_view credential = value;
  if (const std::size_t space = value.find(' ');
      space != std::string_view::npos && space > 0 && space <= 20 &&
      std::all_of(value.begin(), value.begin() + space,
                  [](unsigned char c) { return std::isalpha(c) != 0; })) {
    scheme = value.substr(0, space + 1);
    credential = value.substr(space + 1);
  }
  const std::string_view shown =
      credential.size() >= kShowFrom ? credential.substr(0, kShown) : std::string_view{};
  return fmt::format("{}{}...[redacted, {} bytes]", scheme, shown, value.size());
}

void RedactSecretHeaders(std::vector<scenario::Header>& headers) {
  // A client sends the same header fields at every attempt and run, and redacting them was a
  // twentieth of a virtual run: the last list redacted on this thread is kept, with its result.
  thread_local std::vector<scenario::Header> last;
  thread_local std::vector<scenario::Header> last_redacted;
  if (headers.empty()) return;  // a request's trailers, nearly always
  if (headers == last) {
    headers = last_redacted;
    return;
  }
  last = headers;
  for (auto& header : headers) {
    header.value = scenario::SecretName(header.name) ? RedactedSecret(header.value)
                                                     : scenario::RedactSecrets(header.value);
  }
  last_redacted = headers;
}

void RedactCassetteRequest(scenario::Cassette& cassette) {
  cassette.target = scenario::RedactSecrets(cassette.target);
  cassette.request_body = scenario::RedactSecrets(cassette.request_body);
}

namespace {

// What an entry holds of its request (the writes and the truth are bounded by the plan).
std::size_t EntryBytes(const JournalEntry& entry) {
  std::size_t bytes = entry.target.size() + entry.body.size();
  for (const auto* fields : {&entry.headers, &entry.trailers}) {
    for (const scenario::Header& field : *fields) bytes += field.name.size() + field.value.size();
  }
  return bytes;
}

}  // namespace

// entries_ is used as a ring once it holds `capacity_` entries: the entry with index i lives at
// entries_[i % capacity_]. Until then entries_[i] is the same slot, so one formula serves both
// phases and appends never move entries. Entries dropped for bytes leave an empty slot behind
// first_index_.
std::uint64_t Journal::Begin(JournalEntry entry) {
  std::lock_guard lock(mu_);
  const std::uint64_t index = next_index_++;
  entry.index = index;
  if (capacity_ == 0) {
    ++dropped_;
    first_index_ = next_index_;
    return index;
  }
  if (entries_.size() == capacity_ && first_index_ + capacity_ == index) DropOldest();
  bytes_ += EntryBytes(entry);
  if (entries_.size() < capacity_) {
    entries_.push_back(std::move(entry));
  } else {
    entries_[index % capacity_] = std::move(entry);
  }
  while (bytes_ > max_bytes_ && first_index_ < index) DropOldest();
  return index;
}

void Journal::DropOldest() {
  JournalEntry& oldest = entries_[first_index_ % capacity_];
  bytes_ -= EntryBytes(oldest);
  oldest = JournalEntry{};
  ++first_index_;
  ++dropped_;
}

JournalEntry* Journal::Find(std::uint64_t index) {
  if (index < first_index_ || index >= next_index_ || capacity_ == 0) return nullptr;
  return &entries_[index % capacity_];
}

void Journal::RecordWrite(std::uint64_t index, WriteRecord write) {
  std::lock_guard lock(mu_);
  JournalEntry* entry = Find(index);
  if (entry == nullptr) return;  // dropped from the ring, or the journal was cleared
  entry->bytes_sent += write.size;
  entry->writes.push_back(write);
}

void Journal::End(std::uint64_t index, EndKind end, Duration at, std::string detail) {
  std::lock_guard lock(mu_);
  JournalEntry* entry = Find(index);
  if (entry == nullptr) return;
  entry->end = end;
  entry->ended = at;
  entry->detail = std::move(detail);
}

void Journal::RecordFurtherRequest(std::uint64_t index, Duration at) {
  std::lock_guard lock(mu_);
  JournalEntry* entry = Find(index);
  if (entry != nullptr && !entry->further_request_at) entry->further_request_at = at;
}

std::vector<JournalEntry> Journal::Snapshot() const {
  std::lock_guard lock(mu_);
  std::vector<JournalEntry> out;
  out.reserve(entries_.size());
  for (std::uint64_t index = first_index_; index < next_index_; ++index) {
    out.push_back(entries_[index % capacity_]);
  }
  return out;
}

std::uint64_t Journal::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

void Journal::Clear() {
  std::lock_guard lock(mu_);
  entries_.clear();
  bytes_ = 0;
  next_index_ = 0;
  first_index_ = 0;
  dropped_ = 0;
}

}  // namespace faultline::provider
