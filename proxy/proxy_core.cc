// ProxyExchange: the request, the rule, the upstream's head and the end of the exchange. The
// body's faults (events, cuts) are in proxy_body.cc.
#include "proxy/proxy_core.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "fake_provider/plan/plan_compiler.h"
#include "fake_provider/provider_core.h"
#include "fake_provider/wire/http_date.h"
#include "reference_impl/retry_after.h"

namespace faultline::proxy {
namespace {

bool SameName(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

bool NamedOneOf(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::ranges::any_of(names, [&](std::string_view other) { return SameName(name, other); });
}

// "text/event-stream; charset=utf-8" -> "text/event-stream"
std::string_view MediaType(std::string_view content_type) {
  std::string_view type = content_type.substr(0, content_type.find(';'));
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  return type;
}

// Where the final response's head ends in `raw` (interim 1xx heads skipped); npos if not yet.
std::size_t HeadEnd(std::string_view raw) {
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = raw.find("\r\n\r\n", start);
    if (end == std::string_view::npos) return end;
    const bool interim =
        raw.substr(start).starts_with("HTTP/1.1 1") || raw.substr(start).starts_with("HTTP/1.0 1");
    if (!interim) return end + 4;
    start = end + 4;
  }
}

}  // namespace

ProxyExchange::ProxyExchange(const RuleBook& book, provider::HttpRequest request,
                             const ExchangeSetup& setup)
    : book_(book), request_(std::move(request)), setup_(setup) {
  provider::JournalEntry& client = record_.client;
  client.index = setup_.index - 1;
  client.attempt = static_cast<int>(setup_.index);
  client.connection = setup_.connection;
  client.arrived = setup_.arrived;
  client.method = request_.method;
  client.target = request_.target;
  client.headers = request_.headers;
  provider::RedactSecretHeaders(client.headers);
  client.trailers = request_.trailers;
  client.body = request_.body;
}

void ProxyExchange::Note(std::string text) { notes_.push_back(std::move(text)); }

std::vector<Action> ProxyExchange::Take() {
  record_.faults = fmt::format("{}", fmt::join(notes_, " "));
  return std::exchange(out_, {});
}

void ProxyExchange::Push(Action::Kind kind, Duration at) {
  out_.push_back(Action{kind, std::max(at, release_), {}});
  if (kind != Action::Kind::kWrite) phase_ = Phase::kEnded;
}

void ProxyExchange::Emit(Duration at, std::string_view bytes) {
  if (bytes.empty()) return;
  const Duration when = std::max(at, release_);
  record_.client_bytes.append(bytes);
  if (!out_.empty() && out_.back().kind == Action::Kind::kWrite && out_.back().at == when) {
    out_.back().bytes.append(bytes);
  } else {
    out_.push_back(Action{Action::Kind::kWrite, when, std::string(bytes)});
  }
}

bool ProxyExchange::StreamRequested() const {
  const std::string_view target = request_.target;
  const std::size_t question = target.find('?');
  const std::string_view path = target.substr(0, question);
  const std::string_view query =
      question == std::string_view::npos ? std::string_view() : target.substr(question + 1);
  return provider::StreamRequested(provider::WriterFor(*dialect_).ReadTarget(path, query),
                                   request_.body);
}

std::vector<Action> ProxyExchange::Start() {
  const std::string_view target = request_.target;
  const std::size_t question = target.find('?');
  const std::string_view path = target.substr(0, question);
  dialect_ = DialectOfTarget(
      path, question == std::string_view::npos ? std::string_view() : target.substr(question + 1));
  if (dialect_) record_.dialect = std::string(scenario::ToString(*dialect_));
  selection_ = book_.Select(path, dialect_, setup_.index, setup_.seed);
  if (selection_.rule != nullptr) record_.rule = selection_.rule->name;
  if (selection_.compiled != nullptr) {
    const provider::PlanRequest plan_request{static_cast<int>(setup_.index), StreamRequested(),
                                             setup_.seed, setup_.now,
                                             provider::EstimateTokens(request_.body)};
    const provider::ResponsePlan plan =
        selection_.compiled->Plan(selection_.rule->response, plan_request);
    Note("answered: " + plan.summary);
    FollowPlan(plan);
    upstream_done_ = true;
    return Take();
  }
  record_.upstream_called = true;
  out_.push_back(Action{Action::Kind::kSendUpstream, Duration{0}, UpstreamRequest()});
  return Take();
}

// A fake-provider plan, step by step (an answer has no heartbeats: it streams nothing).
void ProxyExchange::FollowPlan(const provider::ResponsePlan& plan) {
  record_.client.status = plan.status;
  record_.client.plan_summary = plan.summary;
  for (const provider::PlanStep& step : plan.steps) {
    if (phase_ == Phase::kEnded) return;
    switch (step.kind) {
      case provider::PlanStep::Kind::kSend:
        Emit(step.at, step.bytes);
        break;
      case provider::PlanStep::Kind::kClose:
        Push(Action::Kind::kClose, step.at);
        break;
      case provider::PlanStep::Kind::kReset:
        Push(Action::Kind::kReset, step.at);
        break;
      case provider::PlanStep::Kind::kStall:
      case provider::PlanStep::Kind::kHeartbeat:
        if (!step.length) Push(Action::Kind::kHold, step.at);
        break;
    }
  }
  if (phase_ != Phase::kEnded) {
    Push(plan.keep_alive ? Action::Kind::kFinish : Action::Kind::kClose, provider::PlanEnd(plan));
  }
}

std::string ProxyExchange::UpstreamRequest() {
  provider::JournalEntry& upstream = record_.upstream;
  upstream.index = record_.client.index;
  upstream.connection = record_.client.connection;
  upstream.arrived = setup_.arrived;
  upstream.method = request_.method;
  upstream.target = setup_.upstream.path_prefix + request_.target;
  upstream.body = request_.body;
  // The request as sent, but for the Host (the upstream's) and the framing (the body is whole).
  upstream.headers.push_back({"host", setup_.upstream.authority});
  for (const scenario::Header& header : request_.headers) {
    if (NamedOneOf(header.name, {"host", "content-length", "transfer-encoding"})) continue;
    upstream.headers.push_back(header);
  }
  if (!request_.body.empty() || request_.method == "POST" || request_.method == "PUT") {
    upstream.headers.push_back({"content-length", std::to_string(request_.body.size())});
  }
  std::string out = fmt::format("{} {} HTTP/1.1\r\n", upstream.method, upstream.target);
  for (const scenario::Header& header : upstream.headers) {
    out += fmt::format("{}: {}\r\n", header.name, header.value);
  }
  out += "\r\n";
  out += request_.body;
  provider::RedactSecretHeaders(upstream.headers);
  return out;
}

std::vector<Action> ProxyExchange::OnUpstreamBytes(std::string_view bytes, Duration at) {
  if (upstream_done_ || bytes.empty()) return {};
  record_.upstream_bytes.append(bytes);
  record_.upstream.writes.push_back({setup_.arrived + at, setup_.arrived + at, bytes.size()});
  record_.upstream.bytes_sent += bytes.size();
  const ref::HttpFeed feed = parser_.Feed(bytes);
  bool first = false;
  if (!head_done_) {
    head_raw_.append(bytes);
    if (!parser_.has_head()) {
      if (feed.failure) UpstreamBroke(at, false);
      return Take();
    }
    head_done_ = true;
    first = true;
    OnHead(at);
  }
  if (reframe_) {
    OnBody(feed.body, at);
  } else {
    if (!first) Emit(at, bytes);
    if (splitter_) splitter_->Split(feed.body);  // counted for the journal
  }
  if (feed.failure) {
    UpstreamBroke(at, false);
  } else if (feed.complete) {
    UpstreamComplete(at);
  }
  return Take();
}

void ProxyExchange::OnHead(Duration at) {
  const ref::HttpResponseHead& head = parser_.head();
  record_.upstream.status = head.status;
  record_.client.status = head.status;
  const scenario::ProxyRule* rule = selection_.rule;
  const bool success = head.status >= 200 && head.status <= 299;
  if (rule != nullptr && rule->response.headers_delay.count() > 0) {
    Note("headers_delay=" + fmt::format("{}ms", rule->response.headers_delay.count() / 1000));
  }
  release_ = at + (rule != nullptr ? rule->response.headers_delay : Duration{0});
  const std::optional<std::string_view> type = head.headers.Find("content-type");
  if (dialect_ && type && MediaType(*type) == ref::StreamMediaType(RefDialect(*dialect_))) {
    splitter_.emplace(RefDialect(*dialect_));
  }
  if (rule != nullptr) {
    const scenario::Content& content = rule->response.content;
    const bool body_faults = !content.faults.empty() ||
                             content.end.kind != scenario::Termination::Kind::kDone ||
                             content.end.after_event.has_value();
    if (body_faults && !success) {
      Note(fmt::format("body faults not applied: the upstream answered {}", head.status));
    } else if (body_faults) {
      reframe_ = true;
      faults_ = content.faults;
      std::ranges::stable_sort(faults_, {}, &scenario::EventFault::after_event);
      end_ = content.end;
      if (dialect_) framer_.emplace(scenario::Framing{}, scenario::StreamFramingOf(*dialect_));
    }
  }
  const bool rewrite =
      reframe_ ||
      (rule != nullptr && (rule->response.retry_after || rule->response.retry_after_ms ||
                           rule->response.should_retry || !rule->response.headers.empty()));
  if (!rewrite) {
    Emit(at, head_raw_);  // the head and whatever of the body came with it, as sent
  } else {
    Emit(at, RewrittenHead(at));
    const std::size_t head_end = HeadEnd(head_raw_);
    if (!reframe_ && head_end != std::string_view::npos) {
      Emit(at, std::string_view(head_raw_).substr(head_end));  // the body as it came
    }
  }
  if (reframe_) {
    ApplyFaults(0, at);
    if (phase_ == Phase::kForward && end_.after_event == 0) ReachCut(at);
  }
}

// The upstream's head with the rule's hint headers in place of its own, and chunked framing when
// the body is re-sent event by event.
std::string ProxyExchange::RewrittenHead(Duration at) const {
  const ref::HttpResponseHead& head = parser_.head();
  const scenario::ResponseSpec& spec = selection_.rule->response;
  std::string out = fmt::format("HTTP/1.1 {} {}\r\n", head.status, head.reason);
  const auto append = [&out](std::string_view name, std::string_view value) {
    out += fmt::format("{}: {}\r\n", name, value);
  };
  for (const ref::HttpHeader& header : head.headers.entries()) {
    const std::string_view name = header.name;
    if (reframe_ && NamedOneOf(name, {"content-length", "transfer-encoding"})) continue;
    if (spec.retry_after && SameName(name, "retry-after")) continue;
    if (spec.retry_after_ms && SameName(name, "retry-after-ms")) continue;
    if (spec.should_retry && SameName(name, "x-should-retry")) continue;
    append(header.name, header.value);
  }
  if (spec.retry_after) {
    // An HTTP-date is read against the response's Date: the upstream's, else the proxy's now.
    const WallTime now = setup_.now + at;
    WallTime date = std::chrono::floor<std::chrono::seconds>(now);
    if (const auto upstream_date = head.headers.Find("date")) {
      if (const auto parsed = ref::ParseHttpDate(*upstream_date, now)) date = *parsed;
    }
    append("retry-after", provider::FormatRetryAfter(*spec.retry_after, date));
  }
  if (spec.retry_after_ms) append("retry-after-ms", *spec.retry_after_ms);
  if (spec.should_retry) append("x-should-retry", *spec.should_retry ? "true" : "false");
  for (const scenario::Header& header : spec.headers) append(header.name, header.value);
  if (reframe_) append("transfer-encoding", "chunked");
  out += "\r\n";
  return out;
}

std::vector<Action> ProxyExchange::OnUpstreamEnd(Duration at, bool reset) {
  if (upstream_done_) return {};
  if (!reset) {
    const ref::HttpFeed feed = parser_.FeedEof();  // an EOF-delimited body ends here
    if (head_done_ && feed.complete && !feed.failure) {
      if (reframe_) OnBody(feed.body, at);
      UpstreamComplete(at);
      return Take();
    }
  }
  UpstreamBroke(at, reset);
  return Take();
}

std::vector<Action> ProxyExchange::OnUpstreamFailed(Duration at, std::string_view reason) {
  if (upstream_done_) return {};
  EndUpstream(provider::EndKind::kWriteFailed, at, std::string(reason));
  if (head_done_) {  // the answer had begun: end it as the upstream did
    Push(Action::Kind::kClose, at);
    return Take();
  }
  const scenario::Dialect dialect = dialect_.value_or(scenario::Dialect::kOpenAiChat);
  const provider::PlanRequest plan_request{static_cast<int>(setup_.index), false, setup_.seed,
                                           setup_.now + at, 0};
  provider::ResponsePlan plan = book_.Plain(dialect).ErrorPlan(
      502, scenario::ErrorKind::kBadGateway,
      fmt::format("faultline proxy: the upstream cannot be reached ({})", reason), std::nullopt,
      plan_request);
  for (provider::PlanStep& step : plan.steps) step.at += at;
  Note(fmt::format("upstream unreachable: {}", reason));
  FollowPlan(plan);
  return Take();
}

void ProxyExchange::UpstreamComplete(Duration at) {
  EndUpstream(provider::EndKind::kCompleted, at);
  if (phase_ == Phase::kEnded) return;
  if (reframe_) {
    if (phase_ != Phase::kSkipping) EmitBody(at, pending_);
    pending_.clear();
    NoteUnreached();
    Emit(at, "0\r\n\r\n");  // the final chunk: the body is whole
  }
  Push(request_.keep_alive ? Action::Kind::kFinish : Action::Kind::kClose, at);
}

// The upstream ended its answer early: the client sees the same end.
void ProxyExchange::UpstreamBroke(Duration at, bool reset) {
  EndUpstream(reset ? provider::EndKind::kResetByServer : provider::EndKind::kClosedByServer, at);
  if (phase_ == Phase::kEnded) return;
  if (reframe_ && phase_ != Phase::kSkipping) EmitBody(at, pending_);
  pending_.clear();
  if (reframe_) NoteUnreached();
  Push(reset ? Action::Kind::kReset : Action::Kind::kClose, at);
}

void ProxyExchange::EndUpstream(provider::EndKind end, Duration at, std::string detail) {
  if (upstream_done_) return;
  upstream_done_ = true;
  record_.upstream.end = end;
  record_.upstream.ended = setup_.arrived + at;
  record_.upstream.detail = std::move(detail);
  if (splitter_) record_.upstream_events = splitter_->events();
}

void ProxyExchange::Wrote(Duration planned, Duration at, std::size_t size) {
  record_.client.writes.push_back({setup_.arrived + at, setup_.arrived + planned, size});
  record_.client.bytes_sent += size;
}

void ProxyExchange::Ended(provider::EndKind end, Duration at, std::string detail) {
  record_.client.end = end;
  record_.client.ended = setup_.arrived + at;
  record_.client.detail = std::move(detail);
  if (record_.upstream_called && !upstream_done_) {
    EndUpstream(provider::EndKind::kClientClosed, at, "the proxy stopped reading");
  }
  if (record_.upstream_called && record_.upstream.end == provider::EndKind::kInProgress) {
    record_.upstream.end = provider::EndKind::kClientClosed;
  }
  record_.client.plan_summary = record_.faults;
}

}  // namespace faultline::proxy
