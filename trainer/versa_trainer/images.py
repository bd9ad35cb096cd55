"""Image loading shared by the torch adapters: letterbox exactly as Versa's inference does (centred, grey 114)."""
import os

import numpy as np
from PIL import Image, ImageOps


def letterbox_geometry(width, height, size):
    """Versa's src/inference/letterbox.ts letterboxTransform, for a square input of `size`."""
    ratio = min(size / width, size / height)
    rw = max(1, min(size, int(round_half_away(width * ratio))))
    rh = max(1, min(size, int(round_half_away(height * ratio))))
    pad_left = max(0, int(round_half_away((size - rw) / 2 - 0.1)))
    pad_top = max(0, int(round_half_away((size - rh) / 2 - 0.1)))
    return rw, rh, pad_left, pad_top


def round_half_away(value):
    # JavaScript's Math.round rounds .5 up; values here are positive.
    return np.floor(value + 0.5)


def load_letterboxed(path, size):
    """(uint8 HWC array size×size×3, (scale_x, scale_y, pad_left, pad_top), (width, height))."""
    with Image.open(path) as img:
        img = ImageOps.exif_transpose(img).convert("RGB")
        width, height = img.size
        rw, rh, pad_left, pad_top = letterbox_geometry(width, height, size)
        resized = img.resize((rw, rh), Image.BILINEAR)
    canvas = np.full((size, size, 3), 114, dtype=np.uint8)
    canvas[pad_top : pad_top + rh, pad_left : pad_left + rw] = np.asarray(resized)
    return canvas, (rw / width, rh / height, pad_left, pad_top), (width, height)


def resolve(data_dir, relative):
    path = os.path.normpath(os.path.join(data_dir, relative))
    if not path.startswith(os.path.normpath(data_dir) + os.sep):
        raise ValueError("dataset entry outside the data folder: %s" % relative)
    return path
