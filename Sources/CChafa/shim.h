// chafa, for showing badges in the terminal (`badge generate --choose`):
// the kitty graphics protocol, iTerm2 inline images and sixels where the
// terminal has them, Unicode symbol art everywhere else. Swift calls only
// the badge_chafa_ functions here, which keep glib's types on this side.
#ifndef BADGE_CCHAFA_SHIM_H
#define BADGE_CCHAFA_SHIM_H

#include <chafa.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// How images are drawn; the values are chafa's ChafaPixelMode.
enum {
    BADGE_CHAFA_SYMBOLS = CHAFA_PIXEL_MODE_SYMBOLS,
    BADGE_CHAFA_SIXELS = CHAFA_PIXEL_MODE_SIXELS,
    BADGE_CHAFA_KITTY = CHAFA_PIXEL_MODE_KITTY,
    BADGE_CHAFA_ITERM2 = CHAFA_PIXEL_MODE_ITERM2,
};

// Colours for symbol art; the values are chafa's ChafaCanvasMode.
enum {
    BADGE_CHAFA_TRUECOLOR = CHAFA_CANVAS_MODE_TRUECOLOR,
    BADGE_CHAFA_256 = CHAFA_CANVAS_MODE_INDEXED_256,
    BADGE_CHAFA_16 = CHAFA_CANVAS_MODE_INDEXED_16,
};

// What chafa's terminal database makes of the environment `envp`
// ("NAME=value" strings, NULL-terminated: TERM, KITTY_WINDOW_ID,
// TERM_PROGRAM, COLORTERM...): the best way it can draw pictures
// (a BADGE_CHAFA_ pixel mode), and in `colors` the richest colours
// its symbol art may use.
static inline int badge_chafa_detect(char **envp, int *colors) {
    ChafaTermInfo *info = chafa_term_db_detect(chafa_term_db_get_default(), envp);
    int mode = BADGE_CHAFA_SYMBOLS;
    if (chafa_term_info_have_seq(info, CHAFA_TERM_SEQ_BEGIN_KITTY_IMMEDIATE_IMAGE_V1)) {
        mode = BADGE_CHAFA_KITTY;
    } else if (chafa_term_info_have_seq(info, CHAFA_TERM_SEQ_BEGIN_ITERM2_IMAGE)) {
        mode = BADGE_CHAFA_ITERM2;
    } else if (chafa_term_info_have_seq(info, CHAFA_TERM_SEQ_BEGIN_SIXELS)) {
        mode = BADGE_CHAFA_SIXELS;
    }
    if (colors) {
        if (chafa_term_info_have_seq(info, CHAFA_TERM_SEQ_SET_COLOR_FGBG_DIRECT)) *colors = BADGE_CHAFA_TRUECOLOR;
        else if (chafa_term_info_have_seq(info, CHAFA_TERM_SEQ_SET_COLOR_FGBG_256)) *colors = BADGE_CHAFA_256;
        else *colors = BADGE_CHAFA_16;
    }
    chafa_term_info_unref(info);
    return mode;
}

// Draws `width`×`height` straight-alpha RGBA pixels into a canvas of
// `columns`×`rows` terminal cells (each `cell_width`×`cell_height` pixels)
// the way `mode` says, and returns the escape sequences and text that show
// it, for the terminal `envp` describes: a NUL-terminated string from
// malloc (free it), or NULL.
static inline char *badge_chafa_render(const uint8_t *pixels, int width, int height, int columns, int rows,
                                       int cell_width, int cell_height, int mode, int colors, char **envp) {
    ChafaCanvasConfig *config = chafa_canvas_config_new();
    chafa_canvas_config_set_geometry(config, columns, rows);
    chafa_canvas_config_set_cell_geometry(config, cell_width, cell_height);
    chafa_canvas_config_set_pixel_mode(config, (ChafaPixelMode)mode);
    chafa_canvas_config_set_canvas_mode(config, (ChafaCanvasMode)colors);
    chafa_canvas_config_set_work_factor(config, 0.8f);
    ChafaSymbolMap *symbols = chafa_symbol_map_new();
    chafa_symbol_map_add_by_tags(symbols, (ChafaSymbolTags)(CHAFA_SYMBOL_TAG_BLOCK | CHAFA_SYMBOL_TAG_BORDER | CHAFA_SYMBOL_TAG_SPACE));
    chafa_symbol_map_remove_by_tags(symbols, CHAFA_SYMBOL_TAG_WIDE);
    chafa_canvas_config_set_symbol_map(config, symbols);
    chafa_symbol_map_unref(symbols);

    ChafaCanvas *canvas = chafa_canvas_new(config);
    chafa_canvas_config_unref(config);
    if (!canvas) return NULL;
    chafa_canvas_draw_all_pixels(canvas, CHAFA_PIXEL_RGBA8_UNASSOCIATED, pixels, width, height, width * 4);
    ChafaTermInfo *info = chafa_term_db_detect(chafa_term_db_get_default(), envp);
    GString *printed = chafa_canvas_print(canvas, info);
    chafa_term_info_unref(info);
    chafa_canvas_unref(canvas);
    if (!printed) return NULL;
    char *copy = malloc(printed->len + 1);
    if (copy) {
        memcpy(copy, printed->str, printed->len);
        copy[printed->len] = 0;
    }
    g_string_free(printed, TRUE);
    return copy;
}

#endif
