import BadgeKit
import Foundation

/// When to try a request again, the way the OpenAI SDKs do: connection errors
/// and timeouts, 408, 409, 429 and 5xx; backoff min(0.5·2^n, 8) s less up to
/// 25% jitter; a server's `retry-after-ms` or `Retry-After` (seconds or an HTTP
/// date) wins, up to a cap beyond which badge gives up at once.
struct RetryPolicy: Sendable {
    var retries: Int
    var maxRetryAfter: Duration

    static func isRetryable(status: Int) -> Bool {
        status == 408 || status == 409 || status == 429 || status >= 500
    }

    static func isRetryable(_ error: BadgeError) -> Bool {
        error.code == .network || error.code == .timeout
    }

    func backoff(attempt: Int, jitter: Double = Double.random(in: 0...0.25)) -> Duration {
        let seconds = min(0.5 * pow(2, Double(attempt)), 8) * (1 - jitter)
        return .milliseconds(Int(seconds * 1000))
    }

    /// The longest wait a server's answer is taken to ask for: any longer
    /// (`1e300`, `inf`) is as long, far past any `maxRetryAfterSeconds`.
    static let longestServerDelay = Duration.seconds(100 * 365 * 86_400)

    /// What the server asked for, if anything: `retry-after-ms`, then `Retry-After`.
    static func serverDelay(_ response: HTTPResponse, now: Date) -> Duration? {
        if let ms = response.header("retry-after-ms").flatMap(Double.init), ms >= 0 {
            return delay(milliseconds: ms)
        }
        guard let value = response.header("retry-after")?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Double(value), seconds >= 0 { return delay(milliseconds: seconds * 1000) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        if let date = formatter.date(from: value) {
            return delay(milliseconds: max(0, date.timeIntervalSince(now) * 1000))
        }
        return nil
    }

    /// A wait of `ms` (not negative; infinite or huge: the longest).
    private static func delay(milliseconds ms: Double) -> Duration {
        let longest = Double(longestServerDelay.components.seconds) * 1000
        return ms < longest ? .milliseconds(Int(ms)) : longestServerDelay
    }
}
