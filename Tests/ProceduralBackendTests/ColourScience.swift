import Canvas
import Foundation

/// CIELAB and CIEDE2000, written here from the definitions (Sharma, Wu and
/// Dalal 2005) so the tests measure colour independently of the art engine.
struct LabColour: Equatable {
    var l: Double
    var a: Double
    var b: Double

    /// sRGB (D65) to CIELAB.
    init(_ c: RGBA) {
        func linear(_ v: UInt8) -> Double {
            let x = Double(v) / 255
            return x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)
        }
        let r = linear(c.r), g = linear(c.g), bl = linear(c.b)
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * bl) / 0.95047
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * bl
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * bl) / 1.08883
        func f(_ t: Double) -> Double { t > pow(6.0 / 29, 3) ? cbrt(t) : t / (3 * pow(6.0 / 29, 2)) + 4.0 / 29 }
        l = 116 * f(y) - 16
        a = 500 * (f(x) - f(y))
        b = 200 * (f(y) - f(z))
    }

    init(l: Double, a: Double, b: Double) {
        self.l = l
        self.a = a
        self.b = b
    }

    init(hex: String) { self.init(RGBA(hex: hex)!) }

    var hue: Double { (atan2(b, a) * 180 / .pi + 360).truncatingRemainder(dividingBy: 360) }
}

/// CIEDE2000 colour difference (kL = kC = kH = 1).
func deltaE2000(_ x: LabColour, _ y: LabColour) -> Double {
    let rad = Double.pi / 180
    let c1 = (x.a * x.a + x.b * x.b).squareRoot(), c2 = (y.a * y.a + y.b * y.b).squareRoot()
    let cBar = (c1 + c2) / 2
    let g = 0.5 * (1 - (pow(cBar, 7) / (pow(cBar, 7) + pow(25, 7))).squareRoot())
    let a1 = (1 + g) * x.a, a2 = (1 + g) * y.a
    let cp1 = (a1 * a1 + x.b * x.b).squareRoot(), cp2 = (a2 * a2 + y.b * y.b).squareRoot()
    func hueAngle(_ b: Double, _ a: Double) -> Double {
        if a == 0 && b == 0 { return 0 }
        let h = atan2(b, a) / rad
        return h < 0 ? h + 360 : h
    }
    let h1 = hueAngle(x.b, a1), h2 = hueAngle(y.b, a2)
    let dL = y.l - x.l, dC = cp2 - cp1
    var dh = 0.0
    if cp1 * cp2 != 0 {
        dh = h2 - h1
        if dh > 180 { dh -= 360 } else if dh < -180 { dh += 360 }
    }
    let dH = 2 * (cp1 * cp2).squareRoot() * sin(dh / 2 * rad)
    let lBar = (x.l + y.l) / 2, cpBar = (cp1 + cp2) / 2
    var hBar = h1 + h2
    if cp1 * cp2 != 0 {
        if abs(h1 - h2) <= 180 { hBar = (h1 + h2) / 2 } else if h1 + h2 < 360 { hBar = (h1 + h2 + 360) / 2 } else { hBar = (h1 + h2 - 360) / 2 }
    }
    let t = 1 - 0.17 * cos((hBar - 30) * rad) + 0.24 * cos(2 * hBar * rad) + 0.32 * cos((3 * hBar + 6) * rad) - 0.2 * cos((4 * hBar - 63) * rad)
    let dTheta = 30 * exp(-pow((hBar - 275) / 25, 2))
    let rc = 2 * (pow(cpBar, 7) / (pow(cpBar, 7) + pow(25, 7))).squareRoot()
    let sl = 1 + 0.015 * pow(lBar - 50, 2) / (20 + pow(lBar - 50, 2)).squareRoot()
    let sc = 1 + 0.045 * cpBar, sh = 1 + 0.015 * cpBar * t
    let rt = -sin(2 * dTheta * rad) * rc
    return (pow(dL / sl, 2) + pow(dC / sc, 2) + pow(dH / sh, 2) + rt * (dC / sc) * (dH / sh)).squareRoot()
}

/// The median L*, a* and b* (each apart) of a picture's pixels that `include` accepts.
func medianLab(_ image: GDImage, where include: (Int, Int) -> Bool) -> LabColour {
    var ls: [Double] = [], as_: [Double] = [], bs: [Double] = []
    for y in 0..<image.height {
        for x in 0..<image.width where include(x, y) {
            let p = image.pixel(x, y)
            guard p.a == 255 else { continue }
            let lab = LabColour(p)
            ls.append(lab.l)
            as_.append(lab.a)
            bs.append(lab.b)
        }
    }
    func median(_ v: [Double]) -> Double { v.isEmpty ? .nan : v.sorted()[v.count / 2] }
    return LabColour(l: median(ls), a: median(as_), b: median(bs))
}
