import BadgeMain
import Foundation

exit(await BadgeMain.run())
