import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request has not fully arrived `timeout` after
/// its head did: a client that sends a body a byte at a time cannot hold a
/// connection open forever. (Hummingbird's idle timeout closes a connection
/// that sends nothing, or trickles a head that never completes.)
final class RequestReadDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            deadline?.cancel()
            deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
                context.close(promise: nil)
            }
        case .body:
            break
        case .end:
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }
}
