import BadgeMain
import Foundation
import SolidBackend

// badge, every command and backend of it, and the `solid` backend type.
exit(await BadgeMain.run(registering: [SolidGenerator.self]))
