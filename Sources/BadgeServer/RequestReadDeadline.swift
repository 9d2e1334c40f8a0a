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
    /// A head has come, and its request's end not yet.
    private var unfinished = false

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            unfinished = true
        case .body:
            break
        case .end:
            unfinished = false
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    /// The clock starts only for a request still unfinished when what has
    /// come has been read: a GET's head and end come in one read, and need none.
    func channelReadComplete(context: ChannelHandlerContext) {
        if unfinished && deadline == nil {
            deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
                context.close(promise: nil)
            }
        }
        context.fireChannelReadComplete()
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
