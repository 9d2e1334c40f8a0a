import BadgeMain
import SolidBackend

// badge, every command and backend of it, and the `solid` backend type.
await BadgeMain.run(registering: [SolidGenerator.self])
