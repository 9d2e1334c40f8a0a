/// The card page's style and behaviour. The springs and thresholds are the
/// app's (and `FlipTimeline`'s): a drag of one card width turns it 180°, a
/// drag starts after 6 px, a release past 35% of the width commits the flip.
/// `window.card` exposes the state (`state`, `face`, `angle`, `animating`)
/// for scripts and tests, `reset()`, and `motion`, the springs' plan of the last turn:
/// its `duration` (s) and `angleAt(t)`, the angle `t` seconds in, computed as
/// the animation's frames compute it.
package enum CardScript {
    package static let style = #"""
        :root { color-scheme: light dark; --side: min(80vw, 62vh, 440px); }
        * { box-sizing: border-box; }
        html, body { margin: 0; min-height: 100%; }
        body {
          display: grid; place-items: center; min-height: 100vh; min-height: 100svh;
          font: 16px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
          background: radial-gradient(circle at 50% 30%, #ffffff, #e6e6ec); color: #1c1c1e;
          -webkit-tap-highlight-color: transparent;
        }
        @media (prefers-color-scheme: dark) {
          body { background: radial-gradient(circle at 50% 30%, #2e2e33, #111114); color: #f2f2f7; }
        }
        main { display: grid; justify-items: center; gap: 14px; padding: 24px 16px; text-align: center; }
        .card {
          position: relative; width: var(--side); height: var(--side); margin-bottom: 12px;
          border-radius: 6.667%; cursor: grab; outline: none; touch-action: pan-y;
          user-select: none; -webkit-user-select: none; -webkit-touch-callout: none; will-change: transform;
        }
        .card.dragging { cursor: grabbing; }
        /* The focus ring follows the picture's own outline (round around a round badge), not the
           card's box (a page's own outline is turned off): four hard shadows 3 px each way, each of
           what the one before made, then the picture's usual shadow. */
        .card:focus-visible { outline: none; }
        .card:focus-visible .face {
          filter: drop-shadow(3px 0 0 #0a84ff) drop-shadow(-3px 0 0 #0a84ff) drop-shadow(0 3px 0 #0a84ff)
                  drop-shadow(0 -3px 0 #0a84ff) drop-shadow(0 14px 16px rgba(0, 0, 0, .28));
        }
        .face {
          position: absolute; inset: 0; width: 100%; height: 100%; border-radius: 6.667%;
          /* The shadow of the picture's own outline: round under a round badge, on both faces. */
          filter: drop-shadow(0 14px 16px rgba(0, 0, 0, .28)); pointer-events: none; -webkit-user-drag: none;
        }
        .face[hidden] { display: none; }
        /* Counter-rotated, as in the app: turned with the card, its text reads the right way round. */
        .back { transform: rotateY(180deg); }
        .card.fade .face { animation: fade .2s ease-out; }
        @keyframes fade { from { opacity: .2; } to { opacity: 1; } }
        .promise { margin: 0; font-size: 1.15rem; font-weight: 600; max-width: 32rem; }
        .hint { margin: 0; font-size: .9rem; opacity: .65; max-width: 28rem; }
        """#

    package static let script = #"""
        (() => {
          'use strict';
          const el = document.getElementById('card');
          const front = el.querySelector('.front');
          const back = el.querySelector('.back');
          const reducedMotion = window.matchMedia('(prefers-reduced-motion: reduce)');

          const DRAG_START_PX = 6;        // DragGesture(minimumDistance: 6)
          const COMMIT_FRACTION = 0.35;   // commitThreshold
          const DEGREES_PER_WIDTH = 180;  // a drag of one card width turns it over
          const PERSPECTIVE_WIDTHS = 3;   // the camera stands three card widths away
          // snapWithWiggle: (response, dampingFraction, degrees past the new face)
          const WIGGLE = [[0.55, 0.70, 10], [0.35, 0.55, -6], [0.35, 0.75, 0]];
          const SPRING_BACK = [[0.55, 0.82, 0]];
          const TOLERANCE = 0.5;          // degrees (and degrees per 1/60 s): settled

          const card = window.card = {
            committed: 0, drag: 0, offset: 0, velocity: 0,
            animating: false, dragging: false, motion: null,
            state: 'front', face: 'front',
            get angle() { return this.committed + this.drag + this.offset; },
            flip: (direction) => turn(direction || 1),
            // Back to the front at once, for a page that shows another badge in the card.
            reset: () => { stop(); card.committed = 0; card.drag = 0; card.offset = 0; card.velocity = 0; settle(); },
          };

          // A unit-mass spring with SwiftUI's parameters: stiffness (2π/response)²,
          // damping 4π·dampingFraction/response. x is the distance from the target.
          function spring(response, zeta, t, x0, v0) {
            const w = 2 * Math.PI / response;
            if (zeta < 1) {
              const wd = w * Math.sqrt(1 - zeta * zeta);
              const a = x0, b = (v0 + zeta * w * x0) / wd;
              const e = Math.exp(-zeta * w * t), c = Math.cos(wd * t), s = Math.sin(wd * t);
              return [e * (a * c + b * s), e * ((b * wd - zeta * w * a) * c - (a * wd + zeta * w * b) * s)];
            }
            const b = v0 + w * x0, e = Math.exp(-w * t);
            return [(x0 + b * t) * e, (b - w * (x0 + b * t)) * e];
          }

          function settlingTime(response, zeta, x0, v0) {
            const step = 1 / 600, decay = Math.max(zeta * 2 * Math.PI / response, 0.01);
            const horizon = Math.min(30, (10 + Math.log(Math.max(1, Math.abs(x0) + Math.abs(v0)))) / decay);
            let last = 0;
            for (let t = 0; t <= horizon; t += step) {
              const [x, v] = spring(response, zeta, t, x0, v0);
              if (Math.abs(x) > TOLERANCE || Math.abs(v) / 60 > TOLERANCE) last = t;
            }
            return last + step;
          }

          // Each phase starts where the last left the card, with its velocity.
          function plan(phases, direction, x, v) {
            let start = 0;
            return phases.map(([response, zeta, past]) => {
              const target = past * direction;
              const duration = settlingTime(response, zeta, x - target, v);
              const phase = { response, zeta, target, x0: x - target, v0: v, start, duration };
              [x, v] = spring(response, zeta, duration, x - target, v);
              x += target;
              start += duration;
              return phase;
            });
          }

          let animation = null;
          function animate(phases, direction) {
            stop();
            if (reducedMotion.matches) {
              card.offset = 0;
              card.velocity = 0;
              settle();
              el.classList.remove('fade');
              void el.offsetWidth;
              el.classList.add('fade');
              return;
            }
            const steps = plan(phases, direction, card.offset, card.velocity);
            const t0 = performance.now();
            const total = steps[steps.length - 1].start + steps[steps.length - 1].duration;
            // The offset from the committed angle and its velocity, t seconds in.
            const at = (t) => {
              const p = steps.find((s) => t < s.start + s.duration) || steps[steps.length - 1];
              const [x, v] = spring(p.response, p.zeta, t - p.start, p.x0, p.v0);
              return [p.target + x, v];
            };
            const committed = card.committed;
            // At its end, as the last frame does, the card rests exactly on the new face.
            card.motion = { duration: total, angleAt: (t) => t >= total ? committed : committed + at(Math.max(t, 0))[0] };
            card.animating = true;
            const frame = (now) => {
              const t = (now - t0) / 1000;
              if (t >= total) {
                card.offset = 0;
                card.velocity = 0;
                animation = null;
                settle();
                return;
              }
              const [offset, v] = at(t);
              card.offset = offset;
              card.velocity = v;
              render();
              animation = requestAnimationFrame(frame);
            };
            animation = requestAnimationFrame(frame);
          }

          function stop() {
            if (animation !== null) cancelAnimationFrame(animation);
            animation = null;
            card.animating = false;
          }

          function settle() {
            card.animating = false;
            const turns = Math.round(card.committed / 180);
            card.state = ((turns % 2) + 2) % 2 === 1 ? 'back' : 'front';
            el.setAttribute('aria-pressed', String(card.state === 'back'));
            render();
          }

          // Commits a turn to the next face: the card keeps where it is shown
          // now, and the springs carry it to 10° past the new face, 6° short, home.
          function turn(direction) {
            const shown = card.angle;
            card.committed += 180 * direction;
            card.drag = 0;
            card.offset = shown - card.committed;
            card.state = card.state === 'front' ? 'back' : 'front';
            animate(WIGGLE, direction);
          }

          function springBack() {
            const shown = card.angle;
            card.drag = 0;
            card.offset = shown - card.committed;
            animate(SPRING_BACK, 1);
          }

          function render() {
            const angle = card.angle;
            const normalized = ((angle % 360) + 360) % 360;
            const showBack = normalized > 90 && normalized < 270;
            front.hidden = showBack;
            back.hidden = !showBack;
            card.face = showBack ? 'back' : 'front';
            const depth = el.offsetWidth * PERSPECTIVE_WIDTHS;
            el.style.transform = angle === 0 ? '' : `perspective(${depth}px) rotateY(${angle}deg)`;
          }

          let press = null;
          el.addEventListener('pointerdown', (e) => {
            if (e.pointerType === 'mouse' && e.button !== 0) return;
            press = { id: e.pointerId, x: e.clientX, width: Math.max(el.offsetWidth, 1) };
          });
          el.addEventListener('pointermove', (e) => {
            if (!press || e.pointerId !== press.id) return;
            const dx = e.clientX - press.x;
            if (!card.dragging) {
              if (Math.abs(dx) < DRAG_START_PX) return;
              card.dragging = true;
              stop();
              el.classList.add('dragging');
              try { el.setPointerCapture(e.pointerId); } catch (_) { /* the pointer is already gone */ }
            }
            card.drag = reducedMotion.matches ? 0 : dx / press.width * DEGREES_PER_WIDTH;
            render();
          });
          el.addEventListener('pointerup', (e) => {
            if (!press || e.pointerId !== press.id) return;
            const progress = (e.clientX - press.x) / press.width;
            const dragged = card.dragging;
            press = null;
            card.dragging = false;
            el.classList.remove('dragging');
            if (!dragged) { turn(1); return; }
            if (Math.abs(progress) >= COMMIT_FRACTION) turn(progress > 0 ? 1 : -1);
            else springBack();
          });
          el.addEventListener('pointercancel', () => {
            press = null;
            if (!card.dragging) return;
            card.dragging = false;
            el.classList.remove('dragging');
            springBack();
          });

          document.addEventListener('keydown', (e) => {
            if (e.altKey || e.ctrlKey || e.metaKey || e.repeat) return;
            const direction = { ' ': 1, Enter: 1, ArrowRight: 1, ArrowLeft: -1 }[e.key];
            if (!direction) return;
            // Keys typed into a form, a button, a link or a dialog are theirs, not the card's.
            const target = e.target instanceof Element ? e.target : null;
            if (target && target !== el && target.closest('input, textarea, select, button, a, dialog, [contenteditable]')) return;
            if (e.key === 'Enter' && e.target !== el) return;
            e.preventDefault();
            turn(direction);
          });
          window.addEventListener('resize', render);
          render();
          card.ready = true;
        })();
        """#
}
