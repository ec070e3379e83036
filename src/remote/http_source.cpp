// HttpSource (fourdgs/http_source.hpp): range reads over libcurl, a bounded block cache, one
// curl multi handle for concurrent batches, and open_source() for paths and URLs alike.
#include "fourdgs/http_source.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fourdgs/version.hpp"
#include "range_cache.hpp"

#if FOURDGS_HAVE_HTTP
#include <curl/curl.h>
#if LIBCURL_VERSION_NUM < 0x074200
#error "fourdgs needs libcurl 7.66 or newer (curl_multi_poll)"
#endif
#endif

namespace fourdgs {

bool is_url(std::string_view s) noexcept {
    auto starts = [s](std::string_view scheme) {
        if (s.size() < scheme.size()) return false;
        for (std::size_t i = 0; i < scheme.size(); ++i)
            if (std::tolower(static_cast<unsigned char>(s[i])) != scheme[i]) return false;
        return true;
    };
    return starts("http://") || starts("https://");
}

Result<std::unique_ptr<ByteSource>> open_source(const std::string& path_or_url,
                                                const HttpOptions& http) {
    if (is_url(path_or_url)) {
        FOURDGS_ASSIGN(std::unique_ptr<HttpSource> remote, HttpSource::open(path_or_url, http));
        return std::unique_ptr<ByteSource>(std::move(remote));
    }
    FOURDGS_ASSIGN(FileSource file, FileSource::open(path_or_url));
    return std::unique_ptr<ByteSource>(std::make_unique<FileSource>(std::move(file)));
}

#if !FOURDGS_HAVE_HTTP

// Built without libcurl: the type exists (so callers compile unchanged) but never opens.
struct HttpSource::Impl {
    std::string empty;
};

Result<std::unique_ptr<HttpSource>> HttpSource::open(std::string url, HttpOptions) {
    return make_error(ErrorKind::unsupported, "http-not-built",
                      "cannot open " + url +
                          ": this build of fourdgs has no HTTP support (libcurl was not found; "
                          "FOURDGS_HTTP is OFF)");
}
HttpSource::HttpSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpSource::~HttpSource() = default;
std::optional<std::uint64_t> HttpSource::size() const { return std::nullopt; }
Result<std::size_t> HttpSource::read_at(std::uint64_t, std::span<std::uint8_t>) {
    return make_error(ErrorKind::unsupported, "http-not-built", "no HTTP support in this build");
}
Status HttpSource::prefetch(std::span<const ByteRange>, const std::atomic<bool>*) {
    return ok_status();
}
const std::string& HttpSource::url() const noexcept { return impl_->empty; }
const std::string& HttpSource::validator() const noexcept { return impl_->empty; }
bool HttpSource::whole_body() const noexcept { return false; }
HttpStats HttpSource::stats() const { return {}; }
void HttpSource::clear_cache() {}

#else  // FOURDGS_HAVE_HTTP

namespace {

constexpr std::uint64_t kNone = ~std::uint64_t{0};
constexpr int kPollMs = 20;  // the longest a batch goes without looking at its cancel flag

std::string range_text(std::uint64_t offset, std::uint64_t length) {
    return std::to_string(offset) + "-" + std::to_string(offset + length - 1);
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' ||
                          s.back() == '\n'))
        s.remove_suffix(1);
    return s;
}

// A decimal number that fills `s` exactly (no sign, no spaces), without overflow.
std::optional<std::uint64_t> parse_u64(std::string_view s) {
    if (s.empty() || s.size() > 19) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return v;
}

// "bytes FIRST-LAST/TOTAL", "bytes FIRST-LAST/*" or "bytes */TOTAL" (RFC 9110 §14.4).
struct ContentRange {
    bool has_range = false;
    std::uint64_t first = 0, last = 0;
    std::optional<std::uint64_t> total;
};
std::optional<ContentRange> parse_content_range(std::string_view v) {
    v = trim(v);
    if (v.size() < 6 || !iequals(v.substr(0, 6), "bytes ")) return std::nullopt;
    v = trim(v.substr(6));
    const std::size_t slash = v.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    ContentRange cr;
    const std::string_view range = v.substr(0, slash), total = v.substr(slash + 1);
    if (total != "*") {
        cr.total = parse_u64(total);
        if (!cr.total) return std::nullopt;
    }
    if (range != "*") {
        const std::size_t dash = range.find('-');
        if (dash == std::string_view::npos) return std::nullopt;
        auto first = parse_u64(range.substr(0, dash)), last = parse_u64(range.substr(dash + 1));
        if (!first || !last || *last < *first) return std::nullopt;
        if (cr.total && *last >= *cr.total) return std::nullopt;
        cr.has_range = true;
        cr.first = *first;
        cr.last = *last;
    }
    return cr;
}

std::uint32_t backoff_ms(const HttpOptions& o, std::uint32_t wave) {
    std::uint64_t ms = o.backoff_initial_ms;
    for (std::uint32_t i = 1; i < wave && ms < o.backoff_max_ms; ++i) ms *= 2;
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(ms, o.backoff_max_ms));
}

void once_curl_global_init(CURLcode& result) {
    static std::once_flag once;
    static CURLcode code = CURLE_OK;
    std::call_once(once, [] { code = curl_global_init(CURL_GLOBAL_DEFAULT); });
    result = code;
}

}  // namespace

struct HttpSource::Impl {
    // One range request and, per attempt, what came back.
    struct Request {
        // Asked.
        std::uint64_t offset = 0, length = 0;  // a suffix request asks for the last `length` bytes
        bool suffix = false;
        bool probe = false;       // sent by open(): the size and validator are not known yet
        bool may_be_whole = false;  // a 200 (the server ignores ranges) is kept as the whole body
        bool land = false;  // on the wire (Impl::wire): cached the moment it has arrived
        std::uint8_t* dest = nullptr;  // `length` bytes; null: the body goes to `owned`
        std::vector<std::uint8_t> owned;

        // Per attempt.
        long status = 0;
        std::string etag, last_modified;
        std::optional<ContentRange> range;
        std::optional<std::uint64_t> content_length;
        bool headers_done = false, whole = false;
        bool discard = false;  // an answer whose body means nothing (a 416)
        std::uint64_t first = 0, expect = 0, received = 0;
        std::optional<Error> verdict;  // set by a callback, which then aborts the transfer
        bool verdict_retryable = false;
        CURLcode code = CURLE_OK;
        bool done = false;

        std::uint32_t attempts = 0;
        std::optional<Error> error;  // the final outcome when it failed
        CURL* easy = nullptr;
        curl_slist* headers = nullptr;
        Impl* impl = nullptr;

        void reset_response() {
            status = 0;
            etag.clear();
            last_modified.clear();
            range.reset();
            content_length.reset();
            headers_done = whole = discard = false;
            first = expect = received = 0;
            verdict.reset();
            verdict_retryable = false;
            code = CURLE_OK;
            done = false;
            if (!dest) owned.clear();
        }
        std::string what() const {
            return suffix ? "the last " + std::to_string(length) + " bytes"
                          : "bytes " + range_text(offset, length);
        }
    };

    std::string url;
    HttpOptions opt;
    std::string user_agent;
    std::uint64_t size = 0;
    std::string etag, last_modified, if_range;  // pinned by open()
    std::atomic<bool> whole{false};
    std::vector<std::uint8_t> whole_body;

    // Multi handles, one per batch on the wire: several callers (the player's worker, a
    // prefetcher) each run a batch at once, so the link carries one while another starts.
    std::mutex pool_mu;
    std::vector<CURLM*> idle_multis;

    mutable std::mutex mu;  // blocks, ranges on the wire, counters, read-ahead state
    std::condition_variable landed;  // a range left the wire (cached, or failed)
    RangeCache cache;  // bounded by opt.cache_bytes
    std::uint64_t next_sequential = kNone, read_ahead = 0;
    HttpStats stats;

    ~Impl() {
        for (CURLM* m : idle_multis) curl_multi_cleanup(m);
    }

    // A multi handle for one batch: an idle one (its connections kept alive), else a new one.
    CURLM* lease() {
        {
            std::lock_guard lock(pool_mu);
            if (!idle_multis.empty()) {
                CURLM* m = idle_multis.back();
                idle_multis.pop_back();
                return m;
            }
        }
        CURLM* m = curl_multi_init();
        if (!m) return nullptr;
        curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(opt.max_connections));
        curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, static_cast<long>(opt.max_connections));
        return m;
    }
    void give_back(CURLM* m) {
        std::lock_guard lock(pool_mu);
        idle_multis.push_back(m);
    }

    // Waits until nothing of [offset, offset + length) is on the wire (each batch ends within
    // its timeouts).
    void await_wire(std::unique_lock<std::mutex>& lock, std::uint64_t offset, std::uint64_t length) {
        landed.wait(lock, [&] { return !cache.on_wire(offset, length); });
    }

    Error failure(const Request& r, const char* refusal, const std::string& why) const {
        std::string m = "GET " + url + " (" + r.what() + "): ";
        if (r.status != 0) m += "HTTP " + std::to_string(r.status) + ": ";
        m += why;
        return make_error(ErrorKind::io, refusal, std::move(m),
                          r.suffix || r.probe ? kNoOffset : r.offset);
    }

    // ---- one response, judged as its headers end (in curl's callbacks) ----

    bool pinned_differs(const Request& r) const {
        if (!etag.empty() && !r.etag.empty() && r.etag != etag) return true;
        if (!last_modified.empty() && !r.last_modified.empty() && r.last_modified != last_modified)
            return true;
        return false;
    }

    // Decides what to do with the body that follows. False aborts the transfer (r.verdict says
    // why).
    bool judge(Request& r) {
        auto refuse = [&](const char* refusal, const std::string& why, bool retryable = false) {
            r.verdict = failure(r, refusal, why);
            r.verdict_retryable = retryable;
            return false;
        };
        if (!r.probe && pinned_differs(r))
            return refuse("source-changed", "the file changed since it was opened (validator " +
                                                if_range + ", now " +
                                                (r.etag.empty() ? r.last_modified : r.etag) + ")");
        if (r.status == 206) {
            if (!r.range || !r.range->has_range)
                return refuse("http-bad-response", "a 206 without a byte range in Content-Range");
            const ContentRange& cr = *r.range;
            const std::uint64_t n = cr.last - cr.first + 1;
            if (r.probe) {
                if (!cr.total) return refuse("unknown-size", "the server names no total size");
                if (n > r.length)
                    return refuse("http-bad-response", "the server sent " + std::to_string(n) +
                                                           " bytes for a " +
                                                           std::to_string(r.length) + "-byte range");
                r.owned.resize(static_cast<std::size_t>(n));  // n <= the length asked
            } else {
                if (cr.total && *cr.total != size)
                    return refuse("source-changed", "the file is now " +
                                                        std::to_string(*cr.total) +
                                                        " bytes, it was " + std::to_string(size));
                if (cr.first != r.offset || n != r.length)
                    return refuse("http-bad-response", "the server sent bytes " +
                                                           range_text(cr.first, n) +
                                                           " instead");
                if (!r.dest) r.owned.resize(static_cast<std::size_t>(n));
            }
            r.first = cr.first;
            r.expect = n;
            return true;
        }
        if (r.status == 200) {
            // The server ignores ranges (or the file changed and If-Range said so: caught above
            // when the validator or the size differs).
            const std::uint64_t limit = opt.whole_body_limit;
            if (!r.probe && r.content_length && *r.content_length != size)
                return refuse("source-changed", "the whole-body answer is " +
                                                    std::to_string(*r.content_length) +
                                                    " bytes, the file was " + std::to_string(size));
            if (!r.may_be_whole || (r.content_length && *r.content_length > limit))
                return refuse("range-not-supported",
                              "the server ignores byte ranges (200 instead of 206)" +
                                  (r.content_length ? ", and the " +
                                                          std::to_string(*r.content_length) +
                                                          "-byte body"
                                                    : std::string(", and the body")) +
                                  " is over the whole-body limit of " + std::to_string(limit) +
                                  " bytes");
            r.whole = true;
            r.owned.clear();
            r.owned.reserve(static_cast<std::size_t>(r.content_length.value_or(0)));
            return true;
        }
        if (r.status == 412)
            return refuse("source-changed", "the file changed since it was opened (412)");
        if (r.status == 416) {
            if (r.range && r.range->total && *r.range->total == 0 && r.probe) {
                r.expect = 0;  // an empty file: nothing is satisfiable
                r.discard = true;
                return true;
            }
            if (r.range && r.range->total && *r.range->total != size && !r.probe)
                return refuse("source-changed", "the file is now " +
                                                    std::to_string(*r.range->total) + " bytes");
            return refuse("http-bad-response", "the range is not satisfiable");
        }
        const bool retryable = r.status >= 500 || r.status == 429 || r.status == 408;
        return refuse("http-status", "unexpected status", retryable);
    }

    // ---- transfers ----

    CURL* make_easy(Request& r) {
        CURL* e = curl_easy_init();
        if (!e) return nullptr;
        curl_easy_setopt(e, CURLOPT_URL, url.c_str());
        curl_easy_setopt(e, CURLOPT_PRIVATE, static_cast<void*>(&r));
        curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &on_header);
        curl_easy_setopt(e, CURLOPT_HEADERDATA, static_cast<void*>(&r));
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &on_body);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, static_cast<void*>(&r));
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(opt.connect_timeout_ms));
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(opt.transfer_timeout_ms));
        curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(e, CURLOPT_MAXREDIRS, 5L);
#if LIBCURL_VERSION_NUM >= 0x075500
        curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#endif
        curl_easy_setopt(e, CURLOPT_USERAGENT, user_agent.c_str());
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, opt.verify_tls ? 1L : 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, opt.verify_tls ? 2L : 0L);
        curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
        curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
        // Over TLS, wait for the first connection's ALPN so HTTP/2 carries a batch on one
        // connection; plain HTTP/1.1 opens one connection per concurrent request instead.
        if (url.size() > 5 && iequals(std::string_view(url).substr(0, 6), "https:"))
            curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
        // (Built by appending: GCC 12's -Wrestrict misfires on "literal" + std::string here.)
        std::string range = r.suffix ? std::string("-") : range_text(r.offset, r.length);
        if (r.suffix) range.append(std::to_string(r.length));
        curl_easy_setopt(e, CURLOPT_RANGE, range.c_str());  // curl copies the string
        if (!opt.ca_bundle.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, opt.ca_bundle.c_str());
        for (const std::string& line : opt.headers)  // the caller's, on every request
            r.headers = curl_slist_append(r.headers, line.c_str());
        if (!if_range.empty()) {
            std::string header("If-Range: ");
            header.append(if_range);
            r.headers = curl_slist_append(r.headers, header.c_str());
        }
        if (r.headers) curl_easy_setopt(e, CURLOPT_HTTPHEADER, r.headers);
        return e;
    }

    static std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
        Request& r = *static_cast<Request*>(user);
        const std::size_t len = size * n;
        const std::string_view line(data, len);
        if (line.size() >= 5 && line.substr(0, 5) == "HTTP/") {
            // A new response (after a redirect or a 1xx): forget the previous one's headers.
            r.etag.clear();
            r.last_modified.clear();
            r.range.reset();
            r.content_length.reset();
            r.headers_done = false;
            const std::size_t sp = line.find(' ');
            r.status = sp == std::string_view::npos
                           ? 0
                           : static_cast<long>(parse_u64(trim(line.substr(sp + 1, 3))).value_or(0));
            return len;
        }
        const std::string_view t = trim(line);
        if (t.empty()) {
            if (r.status < 200 || (r.status >= 300 && r.status < 400 && r.status != 304))
                return len;  // an interim answer or a redirect curl follows
            r.headers_done = true;
            return r.impl->judge(r) ? len : 0;
        }
        const std::size_t colon = t.find(':');
        if (colon == std::string_view::npos) return len;
        const std::string_view name = trim(t.substr(0, colon)), value = trim(t.substr(colon + 1));
        if (iequals(name, "etag")) r.etag.assign(value);
        else if (iequals(name, "last-modified")) r.last_modified.assign(value);
        else if (iequals(name, "content-range")) r.range = parse_content_range(value);
        else if (iequals(name, "content-length")) r.content_length = parse_u64(value);
        return len;
    }

    static std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
        Request& r = *static_cast<Request*>(user);
        const std::size_t len = size * n;
        if (!r.headers_done || r.discard) return len;  // a redirect's body, or a 416's
        if (r.whole) {
            const std::uint64_t limit = r.impl->opt.whole_body_limit;
            if (r.owned.size() + len > limit) {
                r.verdict = r.impl->failure(r, "range-not-supported",
                                            "the server ignores byte ranges and the body is over "
                                            "the whole-body limit of " +
                                                std::to_string(limit) + " bytes");
                return 0;
            }
            r.owned.insert(r.owned.end(), data, data + len);
            r.received += len;
            return len;
        }
        if (len > r.expect - r.received) {
            r.verdict = r.impl->failure(r, "http-bad-response",
                                        "the body is longer than its Content-Range");
            return 0;
        }
        std::uint8_t* to = r.dest ? r.dest : r.owned.data();
        std::memcpy(to + r.received, data, len);
        r.received += len;
        return len;
    }

    // The outcome of a finished attempt: nullopt when it succeeded; else the error and whether
    // another attempt may succeed.
    std::optional<std::pair<Error, bool>> outcome(Request& r) const {
        if (r.verdict) return std::make_pair(*r.verdict, r.verdict_retryable);
        switch (r.code) {
            case CURLE_OK: break;
            case CURLE_OPERATION_TIMEDOUT:
                return std::make_pair(failure(r, "http-timeout", curl_easy_strerror(r.code)),
                                      false);
            case CURLE_PARTIAL_FILE:
                return std::make_pair(
                    failure(r, "http-short-body",
                            "the connection closed after " + std::to_string(r.received) +
                                " of " + std::to_string(r.expect) + " body bytes"),
                    true);
            case CURLE_COULDNT_CONNECT:
            case CURLE_RECV_ERROR:
            case CURLE_SEND_ERROR:
            case CURLE_GOT_NOTHING:
            case CURLE_HTTP2:
            case CURLE_HTTP2_STREAM:
                return std::make_pair(failure(r, "http-connection", curl_easy_strerror(r.code)),
                                      true);
            case CURLE_PEER_FAILED_VERIFICATION:  // also CURLE_SSL_CACERT (curl >= 7.62)
            case CURLE_SSL_CACERT_BADFILE:
                return std::make_pair(
                    failure(r, "tls-verification-failed", curl_easy_strerror(r.code)), false);
            case CURLE_URL_MALFORMAT:
            case CURLE_UNSUPPORTED_PROTOCOL: {
                Error e = failure(r, "invalid-argument", curl_easy_strerror(r.code));
                e.kind = ErrorKind::invalid_argument;
                return std::make_pair(std::move(e), false);
            }
            default:
                return std::make_pair(failure(r, "http-connection", curl_easy_strerror(r.code)),
                                      false);
        }
        if (!r.headers_done)
            return std::make_pair(failure(r, "http-status", "no final answer"), false);
        if (r.whole) {
            if (r.content_length && r.received != *r.content_length)
                return std::make_pair(
                    failure(r, "http-short-body",
                            "the body ended after " + std::to_string(r.received) + " of " +
                                std::to_string(*r.content_length) + " bytes"),
                    true);
            // Without a Content-Length only the body's own length can tell the file changed.
            if (!r.probe && r.received != size)
                return std::make_pair(failure(r, "source-changed",
                                              "the whole-body answer is " +
                                                  std::to_string(r.received) +
                                                  " bytes, the file was " + std::to_string(size)),
                                      false);
            return std::nullopt;
        }
        if (r.received != r.expect)
            return std::make_pair(failure(r, "http-short-body",
                                          "the body ended after " + std::to_string(r.received) +
                                              " of " + std::to_string(r.expect) + " bytes"),
                                  true);
        return std::nullopt;
    }

    // Runs every request to completion as concurrent transfers, retrying what may be retried.
    // Each request's final failure is left in its `error`; the first is returned. With `cancel`
    // set (read between network events) the batch stops and *cancelled is set. Requests marked
    // `land` must be on the wire; they leave it when the batch ends, landed or not.
    Status run(std::span<Request* const> requests, const std::atomic<bool>* cancel = nullptr,
               bool* cancelled = nullptr) {
        CURLM* multi = lease();
        if (!multi) return make_error(ErrorKind::io, "http-connection", "curl_multi_init failed");
        const Status st = run_on(multi, requests, cancel, cancelled);
        give_back(multi);
        std::lock_guard lock(mu);  // what did not land leaves the wire too
        for (Request* r : requests)
            if (r->land) cache.wire.erase(r->offset);
        landed.notify_all();
        return st;
    }

    // A request that has arrived whole is cached now, not when its batch ends, so the reads
    // that wait for it go on while the rest of the batch is still on the way.
    void land_now(Request& r) {
        if (!r.land || r.whole || outcome(r)) return;
        std::lock_guard lock(mu);
        cache.insert(r.offset, std::move(r.owned));
        cache.evict();
        cache.wire.erase(r.offset);
        r.land = false;
        landed.notify_all();
    }

    // A cancelled batch keeps the bytes that arrived of its range answers (a body's first
    // `received` bytes are the file's from the range's start): a fetch the playhead abandoned
    // and asks again goes on where it stopped, so a player that is behind still catches up.
    void keep_arrived(std::span<Request* const> requests) {
        std::lock_guard lock(mu);
        for (Request* r : requests) {
            if (!r->land || r->whole || r->verdict || r->status != 206 || r->received == 0)
                continue;
            r->owned.resize(static_cast<std::size_t>(r->received));
            cache.insert(r->offset, std::move(r->owned));
        }
        cache.evict();
    }

    Status run_on(CURLM* multi, std::span<Request* const> requests,
                  const std::atomic<bool>* cancel, bool* cancelled) {
        std::vector<Request*> pending(requests.begin(), requests.end());
        std::optional<Error> first_error;
        auto stopped = [&] { return cancel && cancel->load(std::memory_order_relaxed); };
        for (std::uint32_t wave = 0; !pending.empty(); ++wave) {
            if (wave > 0) {
                const auto until =
                    std::chrono::steady_clock::now() + std::chrono::milliseconds(backoff_ms(opt, wave));
                while (std::chrono::steady_clock::now() < until && !stopped())
                    std::this_thread::sleep_for(std::chrono::milliseconds(
                        std::min<long>(kPollMs, std::chrono::duration_cast<std::chrono::milliseconds>(
                                                    until - std::chrono::steady_clock::now())
                                                    .count() + 1)));
            }
            if (stopped()) {
                if (cancelled) *cancelled = true;
                return ok_status();
            }
            for (Request* r : pending) {
                r->reset_response();
                r->impl = this;
                ++r->attempts;
                r->easy = make_easy(*r);
                if (!r->easy || curl_multi_add_handle(multi, r->easy) != CURLM_OK) {
                    r->verdict = failure(*r, "http-connection", "cannot start a transfer");
                    r->done = true;
                }
            }
            {
                std::lock_guard lock(mu);
                stats.requests += pending.size();
                stats.retries += wave > 0 ? pending.size() : 0;
                const std::uint64_t conns = std::max<std::uint32_t>(1, opt.max_connections);
                stats.round_trips += (pending.size() + conns - 1) / conns;
            }
            bool was_cancelled = false;
            int running = 1;
            while (running > 0) {
                if (curl_multi_perform(multi, &running) != CURLM_OK) break;
                for (int left = 0; CURLMsg* msg = curl_multi_info_read(multi, &left);) {
                    if (msg->msg != CURLMSG_DONE) continue;
                    void* p = nullptr;
                    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &p);
                    auto* r = static_cast<Request*>(p);
                    r->code = msg->data.result;
                    r->done = true;
                    land_now(*r);
                }
                if (running == 0) break;
                if (stopped()) {
                    was_cancelled = true;
                    break;
                }
                curl_multi_poll(multi, nullptr, 0, kPollMs, nullptr);
            }
            std::uint64_t received = 0;
            for (Request* r : pending) {
                if (r->easy) {
                    curl_multi_remove_handle(multi, r->easy);
                    curl_easy_cleanup(r->easy);
                    r->easy = nullptr;
                }
                curl_slist_free_all(r->headers);
                r->headers = nullptr;
                received += r->whole ? r->owned.size() : r->received;
            }
            {
                std::lock_guard lock(mu);
                stats.bytes_fetched += received;
            }
            if (was_cancelled) {
                keep_arrived(pending);
                if (cancelled) *cancelled = true;
                return ok_status();
            }
            std::vector<Request*> again;
            for (Request* r : pending) {
                if (!r->done) r->code = CURLE_RECV_ERROR;  // the multi handle failed under it
                auto bad = outcome(*r);
                if (!bad) continue;
                if (bad->second && r->attempts < std::max<std::uint32_t>(1, opt.max_attempts)) {
                    again.push_back(r);
                    continue;
                }
                Error e = std::move(bad->first);
                if (r->attempts > 1) e.message += " (after " + std::to_string(r->attempts) + " attempts)";
                r->error = e;
                if (!first_error) first_error = std::move(e);
            }
            // A request that cannot succeed fails the batch: no point retrying the others.
            pending = first_error ? std::vector<Request*>{} : std::move(again);
        }
        if (first_error) return *first_error;
        return ok_status();
    }

    // A later answer that was a whole body (the server stopped honouring ranges): the file is
    // now held whole.
    bool adopt_whole(std::span<Request* const> requests) {
        for (Request* r : requests)
            if (r->whole && !r->error && r->owned.size() == size) {
                std::lock_guard lock(mu);
                whole_body = std::move(r->owned);
                whole = true;
                cache.blocks.clear();
                cache.cached = 0;
                return true;
            }
        return false;
    }
};

Result<std::unique_ptr<HttpSource>> HttpSource::open(std::string url, HttpOptions options) {
    if (!is_url(url))
        return make_error(ErrorKind::invalid_argument, "invalid-argument",
                          "'" + url + "' is not an http:// or https:// URL");
    CURLcode init = CURLE_OK;
    once_curl_global_init(init);
    if (init != CURLE_OK)
        return make_error(ErrorKind::io, "http-connection",
                          std::string("libcurl did not initialize: ") + curl_easy_strerror(init));
    options.max_attempts = std::max<std::uint32_t>(1, options.max_attempts);
    options.max_connections = std::max<std::uint32_t>(1, options.max_connections);
    options.speculative_bytes = std::max<std::uint64_t>(1, options.speculative_bytes);
    options.min_read_bytes = std::max<std::uint64_t>(1, options.min_read_bytes);
    options.max_read_ahead = std::max(options.max_read_ahead, options.min_read_bytes);

    auto impl = std::make_unique<Impl>();
    impl->url = std::move(url);
    impl->opt = options;
    impl->cache.bound = options.cache_bytes;
    impl->user_agent = options.user_agent.empty() ? std::string("fourdgs/") + kVersionString
                                                  : options.user_agent;

    // One round trip: the head and the tail at once. The head may come back whole (a server
    // that ignores ranges); the tail then adds nothing.
    Impl::Request head, tail;
    head.length = tail.length = options.speculative_bytes;
    head.probe = tail.probe = true;
    head.may_be_whole = true;
    tail.suffix = true;
    Impl::Request* both[] = {&head, &tail};
    Impl& m = *impl;
    const Status started = m.run(both);
    if (!started.ok() && !head.error && !tail.error) return started.error();
    if (head.error) return *head.error;
    if (head.whole) {
        m.size = head.owned.size();
        m.whole = true;
        m.whole_body = std::move(head.owned);
    } else if (head.status == 416) {
        m.size = 0;  // an empty file
    } else {
        if (tail.error) return *tail.error;
        m.size = *head.range->total;
        if (*tail.range->total != m.size || (!head.etag.empty() && tail.etag != head.etag) ||
            (!head.last_modified.empty() && tail.last_modified != head.last_modified))
            return m.failure(tail, "source-changed",
                             "the file changed between the head and the tail requests");
    }
    m.etag = head.etag;
    m.last_modified = head.last_modified;
    // If-Range needs a strong validator: a weak ETag (W/"...") never matches, so fall back to
    // the date, which servers compare exactly.
    m.if_range = !m.etag.empty() && m.etag.rfind("W/", 0) != 0 ? m.etag : m.last_modified;
    if (!m.whole && m.size > 0) {
        std::lock_guard lock(m.mu);
        m.cache.insert(head.first, std::move(head.owned));
        m.cache.insert(tail.first, std::move(tail.owned));
        m.cache.evict();
    }
    return std::unique_ptr<HttpSource>(new HttpSource(std::move(impl)));
}

HttpSource::HttpSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpSource::~HttpSource() = default;

std::optional<std::uint64_t> HttpSource::size() const { return impl_->size; }
const std::string& HttpSource::url() const noexcept { return impl_->url; }
const std::string& HttpSource::validator() const noexcept { return impl_->if_range; }
bool HttpSource::whole_body() const noexcept { return impl_->whole; }

HttpStats HttpSource::stats() const {
    std::lock_guard lock(impl_->mu);
    return impl_->stats;
}

void HttpSource::clear_cache() {
    Impl& m = *impl_;
    std::lock_guard lock(m.mu);
    m.cache.blocks.clear();
    m.cache.cached = 0;
    m.next_sequential = kNone;
}

Result<std::size_t> HttpSource::read_at(std::uint64_t offset, std::span<std::uint8_t> out) {
    Impl& m = *impl_;
    if (offset >= m.size || out.empty()) return std::size_t{0};
    const std::uint64_t n = std::min<std::uint64_t>(out.size(), m.size - offset);
    const std::span<std::uint8_t> dst = out.first(static_cast<std::size_t>(n));
    auto served = [&]() -> bool {  // under `mu`
        if (m.whole) {
            std::memcpy(dst.data(), m.whole_body.data() + offset, dst.size());
        } else {
            if (!m.cache.gaps(offset, n).empty()) return false;
            m.cache.copy_cached(offset, dst);
        }
        ++m.stats.cache_hits;
        return true;
    };
    std::vector<ByteRange> missing;
    const bool direct = n >= m.opt.max_read_ahead;
    {
        std::unique_lock lock(m.mu);
        // Bytes another batch is fetching are waited for, not asked for twice.
        if (!m.whole) m.await_wire(lock, offset, n);
        if (served()) return dst.size();
        missing = m.cache.gaps(offset, n);
        if (direct) {
            m.cache.copy_cached(offset, dst);  // the gaps come straight from the network below
        } else {
            // Read ahead past the last gap: the minimum for a random miss, doubling while the
            // misses continue one another (a front-to-back reader), never into cached bytes or
            // bytes on the wire.
            ByteRange& last = missing.back();
            m.read_ahead = last.offset == m.next_sequential
                               ? std::min(std::max(m.read_ahead * 2, m.opt.min_read_bytes),
                                          m.opt.max_read_ahead)
                               : m.opt.min_read_bytes;
            std::uint64_t end = std::max(last.offset + last.length, last.offset + m.read_ahead);
            end = std::min(end, m.size);
            const std::uint64_t need_end = last.offset + last.length;
            auto next = m.cache.blocks.lower_bound(need_end);
            if (next != m.cache.blocks.end()) end = std::min(end, std::max(next->first, need_end));
            auto flying = m.cache.wire.lower_bound(need_end);
            if (flying != m.cache.wire.end()) end = std::min(end, std::max(flying->first, need_end));
            last.length = end - last.offset;
            m.next_sequential = end;
            for (const ByteRange& g : missing) m.cache.wire[g.offset] = g.length;
        }
    }
    std::vector<Impl::Request> requests(missing.size());
    std::vector<Impl::Request*> batch;
    for (std::size_t i = 0; i < missing.size(); ++i) {
        Impl::Request& r = requests[i];
        r.offset = missing[i].offset;
        r.length = missing[i].length;
        r.may_be_whole = m.size <= m.opt.whole_body_limit;
        if (direct) r.dest = dst.data() + (r.offset - offset);
        batch.push_back(&r);
    }
    const Status st = m.run(batch);
    const bool whole = m.adopt_whole(batch);
    std::lock_guard lock(m.mu);
    if (!direct) {  // on the wire until cached here, so that a waiting read finds them
        for (Impl::Request& r : requests) {
            if (st.ok() && !whole) m.cache.insert(r.offset, std::move(r.owned));
            m.cache.wire.erase(r.offset);
        }
        m.landed.notify_all();
    }
    if (whole) {
        served();
        return dst.size();
    }
    if (!st.ok()) return st.error();
    if (!direct) m.cache.copy_cached(offset, dst);
    m.cache.evict();
    return dst.size();
}

Status HttpSource::prefetch(std::span<const ByteRange> ranges, const std::atomic<bool>* cancel) {
    Impl& m = *impl_;
    if (m.whole || ranges.empty()) return ok_status();
    // The missing parts of the ranges that no batch is fetching yet, in the order given, up to
    // half the cache bound (the ranges a caller needs first come first); then adjacent parts
    // merge into one request each, and go on the wire. A batch in flight does not hold this
    // one up: each runs on its own connections, and its requests are cached as they arrive.
    std::vector<ByteRange> groups;
    {
        std::lock_guard lock(m.mu);
        const std::uint64_t cap = m.opt.cache_bytes / 2;
        std::uint64_t total = 0;
        std::vector<ByteRange> missing;
        for (const ByteRange& r : ranges) {
            if (r.offset >= m.size || r.length == 0) continue;
            const std::uint64_t len = std::min(r.length, m.size - r.offset);
            const std::vector<ByteRange> g = m.cache.off_wire(m.cache.gaps(r.offset, len));
            std::uint64_t want = 0;
            for (const ByteRange& x : g) want += x.length;
            if (total + want > cap) break;
            total += want;
            missing.insert(missing.end(), g.begin(), g.end());
        }
        std::sort(missing.begin(), missing.end(),
                  [](const ByteRange& a, const ByteRange& b) { return a.offset < b.offset; });
        for (const ByteRange& g : missing) {
            if (!groups.empty() && g.offset <= groups.back().offset + groups.back().length) {
                ByteRange& last = groups.back();
                last.length = std::max(last.offset + last.length, g.offset + g.length) - last.offset;
            } else {
                groups.push_back(g);
            }
        }
        for (const ByteRange& g : groups) m.cache.wire[g.offset] = g.length;
    }
    if (groups.empty()) return ok_status();
    std::vector<Impl::Request> requests(groups.size());
    std::vector<Impl::Request*> batch;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        requests[i].offset = groups[i].offset;
        requests[i].length = groups[i].length;
        requests[i].may_be_whole = m.size <= m.opt.whole_body_limit;
        requests[i].land = true;
        batch.push_back(&requests[i]);
    }
    bool cancelled = false;
    const Status st = m.run(batch, cancel, &cancelled);
    if (m.adopt_whole(batch) || cancelled) return ok_status();
    return st;
}
#endif  // FOURDGS_HAVE_HTTP

}  // namespace fourdgs
