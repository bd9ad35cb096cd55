"""Copies the few real samples the format tests need from ../shared/datasets into test/fixtures/<dataset>/.

Run once from the repository root: python3 scripts/make-test-fixtures.py /work/shared/datasets
The picks are fixed file-name prefixes, chosen to keep every oddity the tests check (see each SOURCE.md).
"""
import json, os, shutil, sys

SRC = sys.argv[1] if len(sys.argv) > 1 else '../shared/datasets'
DST = 'test/fixtures'

def files(d):
    return sorted(os.listdir(d))

def copy(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(src, dst)

def pick(names, prefixes, n):
    chosen = [x for p in prefixes for x in names if x.startswith(p)]
    for x in names:
        if len(chosen) >= n: break
        if x not in chosen: chosen.append(x)
    return chosen

def docs(name):
    for f in ['README.dataset.txt', 'README.roboflow.txt', 'data.yaml', 'SOURCE.txt']:
        p = os.path.join(SRC, name, f)
        if os.path.exists(p): copy(p, os.path.join(DST, name, f))

def yolo(name, picks):
    docs(name)
    for split, (prefixes, n) in picks.items():
        imgs = files(os.path.join(SRC, name, split, 'images'))
        for img in pick(imgs, prefixes, n):
            stem = os.path.splitext(img)[0]
            copy(os.path.join(SRC, name, split, 'images', img), os.path.join(DST, name, split, 'images', img))
            copy(os.path.join(SRC, name, split, 'labels', stem + '.txt'), os.path.join(DST, name, split, 'labels', stem + '.txt'))

def coco(name, picks):
    docs(name)
    for split, (prefixes, n) in picks.items():
        doc = json.load(open(os.path.join(SRC, name, split, '_annotations.coco.json')))
        names = sorted(i['file_name'] for i in doc['images'])
        keep = set(pick(names, prefixes, n))
        doc['images'] = [i for i in doc['images'] if i['file_name'] in keep]
        ids = {i['id'] for i in doc['images']}
        doc['annotations'] = [a for a in doc['annotations'] if a['image_id'] in ids]
        os.makedirs(os.path.join(DST, name, split), exist_ok=True)
        with open(os.path.join(DST, name, split, '_annotations.coco.json'), 'w') as f: json.dump(doc, f)
        for img in keep: copy(os.path.join(SRC, name, split, img), os.path.join(DST, name, split, img))

def masks(name, picks):
    docs(name)
    for split, (prefixes, n) in picks.items():
        d = os.path.join(SRC, name, split)
        copy(os.path.join(d, '_classes.csv'), os.path.join(DST, name, split, '_classes.csv'))
        imgs = [x for x in files(d) if x.endswith('.jpg')]
        for img in pick(imgs, prefixes, n):
            stem = img[:-4]
            copy(os.path.join(d, img), os.path.join(DST, name, split, img))
            copy(os.path.join(d, stem + '_mask.png'), os.path.join(DST, name, split, stem + '_mask.png'))

def folders(name, per_class):
    docs(name)
    for split in ['train', 'valid', 'test']:
        for cls in files(os.path.join(SRC, name, split)):
            for img in files(os.path.join(SRC, name, split, cls))[:per_class]:
                copy(os.path.join(SRC, name, split, cls, img), os.path.join(DST, name, split, cls, img))

# indian-vehicles: the empty label files (frame_38 copies in train, frame_381 in valid) are kept.
yolo('indian-vehicles-yolo', {'train': (['Stn_HD_1_time_2024-05-15T07_30_02_001_frame_38_'], 4), 'valid': (['Stn_HD_1_time_2024-05-15T07_30_02_001_frame_381'], 2), 'test': ([], 1)})
# toy-cars: images whose label files mix 5-field box lines into polygon files.
yolo('toy-cars-yolo-seg', {'train': (['WIN_20251126_01_49_08_Pro_jpg.rf.0027', 'WIN_20251126_01_47_59_Pro_jpg.rf.594e'], 3), 'valid': ([], 2), 'test': ([], 1)})
# plants: image id 0 and an unannotated image in train.
coco('plants-coco-seg', {'train': (['jn9vyid8m5oiqbbk5rilvvlbq2ql', '18f4lq885'], 3), 'valid': ([], 2), 'test': ([], 1)})
# car-damage: train image 231 has a skewed quadrilateral; valid image 272 holds the only real outline (annotation 59, 22 points).
coco('car-damage-coco-seg', {'train': (['231_jpg.rf.bf661c'], 2), 'valid': (['272_jpg'], 3), 'test': ([], 1)})
folders('fresh-rotten-cls', 1)
# plants masks: two of the wrong-size (3840x2160, all-zero) masks.
masks('plants-semantic-masks', {'train': (['18f4lq885', 'nq5xib6wt'], 3), 'valid': ([], 2), 'test': ([], 1)})
masks('indoor-semantic-masks', {'train': ([], 1), 'valid': ([], 1), 'test': ([], 5)})
