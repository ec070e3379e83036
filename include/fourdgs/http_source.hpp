// fourdgs/http_source.hpp — a .4dgs file where it lies: on a web server, a CDN or an object
// store, read by HTTP(S) byte ranges (libcurl).
//
// HttpSource is a random-access ByteSource, so every front-end reads through it unchanged: the
// indexed readers seek with range requests, the streaming readers read front to back (misses
// that continue the previous one double the read-ahead, up to HttpOptions::max_read_ahead).
//
// Round trips. open() sends two requests at once: the head of the file and a suffix request
// for its tail (HttpOptions::speculative_bytes each, 64 KiB by default: enough for the footer,
// the summary and the front matter of typical files). It learns the size and pins the
// validator from them, and keeps both in its cache, so IndexedReader::open over it costs that
// one round trip (a second only when the summary or the front matter is larger). A seek is one
// more: the readers announce the ranges an instant needs (ByteSource::prefetch), the source
// coalesces adjacent ranges into one request per contiguous group and sends the groups
// concurrently (curl multi, connections kept alive, HTTP/2 multiplexed where the server offers
// it), then serves the reads from memory.
//
// Consistency. The first response's validator (a strong ETag, else Last-Modified) is pinned and
// sent as If-Range on every later request; every response's ETag, Last-Modified and total size
// are compared with the pinned ones. A file that changed is refused as `source-changed` and no
// byte of the new version is ever served. A server that answers 200 instead of 206 (it ignores
// ranges) is detected: a file up to HttpOptions::whole_body_limit is then kept whole in memory,
// a larger one is refused as `range-not-supported`.
//
// Faults. Connection resets, empty replies, short bodies and 5xx/429 answers are retried with
// exponential backoff, at most HttpOptions::max_attempts attempts per request; a timeout
// (connect or transfer, per attempt) is not retried. A body that is shorter or longer than its
// Content-Range is never served. Every failure is an Error of kind io whose message names the
// URL, the byte range and the HTTP status; refusals: http-status (an unexpected status, or 5xx
// after the last attempt), http-timeout, http-connection (connect, reset or TLS failure after
// the last attempt), tls-verification-failed (the server's certificate does not verify against
// the trusted authorities: not retried), http-short-body, http-bad-response (a Content-Range that is not the range
// asked), source-changed, range-not-supported, unknown-size; invalid-argument for a URL curl
// cannot parse. Nothing waits past connect + transfer timeout per attempt, plus the backoffs.
//
// Memory. Cached bytes are bounded by HttpOptions::cache_bytes (blocks already read are dropped
// first, least recently used first, then prefetched blocks not yet read, newest first; a
// prefetch larger than half the bound fetches only its first half-bound of ranges, and the rest
// is read on demand). Reads of max_read_ahead bytes or more go straight to the caller's buffer.
// In whole-body mode the one body (at most whole_body_limit) is the cache. Beside the cache, the
// bodies on their way: at most what the batches in flight asked for.
//
// Keeping the link full. Each batch runs on its own curl multi handle (idle ones are kept, with
// their connections, for the next batches), so a prefetch in flight does not hold up another
// caller's batch: the link carries one while the next one's round trip goes out. A prefetched
// request is cached the moment it has arrived, not when its whole batch has. Ranges some batch
// is fetching are "on the wire": a prefetch leaves them out, and a read that needs them waits
// for them to land instead of asking twice. A cancelled prefetch keeps the bytes that arrived of
// its answers (a range's first bytes), so a fetch asked again goes on where it stopped.
//
// Thread safety: read_at, prefetch, stats and clear_cache may be called from several threads at
// once; each caller's batch runs on its own connections, and reads served from the cache do
// not wait for a batch in flight.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fourdgs/config.hpp"
#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/io.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

struct HttpOptions {
    std::uint64_t speculative_bytes = 64 << 10;  // head and tail fetched by open()
    std::uint64_t cache_bytes = 64 << 20;        // bound on cached bytes (LRU)
    std::uint64_t min_read_bytes = 16 << 10;     // a cache miss fetches at least this much
    std::uint64_t max_read_ahead = 4 << 20;      // sequential misses double up to this
    std::uint64_t whole_body_limit = 64 << 20;   // a range-ignoring server: keep a body up to this
    std::uint32_t connect_timeout_ms = 10000;    // per attempt
    std::uint32_t transfer_timeout_ms = 60000;   // per attempt, whole request
    std::uint32_t max_attempts = 4;              // per request, retries included (>= 1)
    std::uint32_t backoff_initial_ms = 50;       // before the 2nd attempt; doubles each time
    std::uint32_t backoff_max_ms = 2000;
    std::uint32_t max_connections = 8;           // concurrent requests in one batch (each of
                                                 // the batches in flight at once)
    bool verify_tls = true;                      // check the server's certificate (https)
    std::string user_agent;                      // "" = "fourdgs/<version>"
    // Private servers. `headers`: "Name: value" lines sent with every request, redirects
    // included (a bearer token, a CDN's key); a signed URL's query string is part of `url` and
    // is sent as given. `ca_bundle`: a PEM file of the certificate authorities to trust for
    // https instead of the system's ("" = the system's). A certificate that does not verify is
    // refused as tls-verification-failed (not retried).
    std::vector<std::string> headers;
    std::string ca_bundle;
};

// What a source has sent and received, for measuring (all counters only grow).
struct HttpStats {
    std::uint64_t requests = 0;     // HTTP requests sent, retries included
    std::uint64_t round_trips = 0;  // sequential waves of concurrent requests
    std::uint64_t bytes_fetched = 0;  // response body bytes received
    std::uint64_t retries = 0;      // requests sent again after a retryable failure
    std::uint64_t cache_hits = 0;   // reads served wholly from memory
};

class HttpSource final : public ByteSource {
public:
    // Opens `url` (http:// or https://): the speculative head and tail requests, in one round
    // trip. Refusals: unsupported ("http-not-built") when the library was built without libcurl;
    // every refusal of the header comment; unknown-size when the server names no total size.
    static Result<std::unique_ptr<HttpSource>> open(std::string url, HttpOptions options = {});

    HttpSource(const HttpSource&) = delete;
    HttpSource& operator=(const HttpSource&) = delete;
    ~HttpSource() override;

    std::optional<std::uint64_t> size() const override;
    bool random_access() const override { return true; }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override;
    // Fetches the ranges not already cached or on the wire: adjacent or overlapping ranges
    // coalesce into one request, the groups go out concurrently as one batch, each cached as it
    // arrives. Polls `cancel` between network events (every 20 ms at most); a cancelled batch
    // keeps what arrived of each answer (from its range's start) and nothing else.
    Status prefetch(std::span<const ByteRange> ranges,
                    const std::atomic<bool>* cancel = nullptr) override;

    const std::string& url() const noexcept;
    // The pinned validator as sent in If-Range ("" when the server gave neither ETag nor
    // Last-Modified: then only the total size can reveal a change).
    const std::string& validator() const noexcept;
    // True when the server ignored ranges and the whole file is held in memory.
    bool whole_body() const noexcept;
    HttpStats stats() const;
    // Drops every cached byte (not the validator or the size; not a whole body).
    void clear_cache();

private:
    struct Impl;
    explicit HttpSource(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// True when `path_or_url` starts with http:// or https:// (ASCII case-insensitive scheme).
bool is_url(std::string_view path_or_url) noexcept;

// A source for a path or a URL: http(s):// → HttpSource (with `http`), anything else → the file
// at that path (FileSource). Refusals: those of FileSource::open and HttpSource::open (a URL in a
// build without libcurl: unsupported, "http-not-built", naming the URL).
Result<std::unique_ptr<ByteSource>> open_source(const std::string& path_or_url,
                                                const HttpOptions& http = {});

}  // namespace fourdgs
FOURDGS_PUBLIC_END
