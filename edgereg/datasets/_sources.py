"""Where every original data file comes from: its public repository, the commit
it was taken at, its path there, its size and its sha256.

The one table of the data files (``_readers`` checks files against its
sha256s, ``fetch`` downloads from it). Each file is the one at its recorded
commit, byte for byte: the raw URL is
``https://raw.githubusercontent.com/<repository>/<commit>/<path>``; the
sizes and sha256s were computed from the files themselves (each folder's
``SOURCE.md`` of the data collection records the same).
"""

from __future__ import annotations

from typing import NamedTuple


class _File(NamedTuple):
    repository: str  # owner/name on GitHub
    commit: str  # the commit the file was taken at (40 hex digits)
    path: str  # its path in that repository
    size: int  # bytes
    sha256: str


#: ``<dataset directory>/<file>`` (as under ``root``) -> where it comes from.
SOURCES: dict[str, _File] = {
    "a9a/a9a": _File(
        "dtera/fl_xgboost",
        "0abd2e16afeea63f53ff249f4e0ad15a8e5d663c",
        "data/a9a", 2_327_314,
        "7ba53cccb27e2e525f0fb173e1f446d49856e3fb007eb43be4ec6d0f5b3335ca",
    ),
    "a9a/a9a.t": _File(
        "UltramanGaia/ML2017-lab-02",
        "a83899df9c288a04fb7047dbcbdf1d2eafb28e70",
        "data/a9a.t", 1_164_628,
        "1f448a153f0320399a7e40836eb207655b0bde0f21fc941cc472193daa9f5de9",
    ),
    "air_quality/AirQualityUCI.csv": _File(
        "24apanda/Dataset",
        "f3d63455ae5679808a068863d50960e4e5a352aa",
        "AirQualityUCI.csv", 788_875,
        "c810b84beaca8194dc0ad35ca8d2eb201f0c97a10572eb5c1f02f27523e2b367",
    ),
    "chess/chessweka.csv": _File(
        "ogozuacik/concept-drift-datasets-scikit-multiflow",
        "fcbad97fe3df0e6d31020a6a74e3b456fd3a8377",
        "real-world/chessweka.csv", 13_043,
        "73b7c9402b67684e2283a526ca3dea35e5e5060598c5cd54b32727fb0b1122e9",
    ),
    "debutanizer/debutanizer_data.txt": _File(
        "AnkurP771/Debutanizer-Data-Analysis",
        "4388d7cf8575ff93e22131df2915d7f6961c8ad7",
        "debutanizer_data.txt", 311_229,
        "071734574de642301a7ab68f409a863c4f3358e7b3cfc141da4742f1a9aca5e6",
    ),
    "elec2/elec2_data.dat": _File(
        "vlosing/driftDatasets",
        "01d08dec716870a36ea793e26e7e896ba921fe5d",
        "realWorld/Elec2/elec2_data.dat", 2_903_434,
        "f96f3b096a5318c1dab465f9c64b50824f751d651a13b864137cfefac6a6bef2",
    ),
    "elec2/elec2_label.dat": _File(
        "vlosing/driftDatasets",
        "01d08dec716870a36ea793e26e7e896ba921fe5d",
        "realWorld/Elec2/elec2_label.dat", 90_624,
        "769805ed2f942698b72bb6398d1f685ddd2c8b01213334658df709466890c154",
    ),
    "hyperplane/hyperplane1.arff": _File(
        "yoavzelinger/APPETITE",
        "8108f3a9b1cd5899dd752fe37a80819e88717f81",
        "data/hyperplane1.arff", 909_117,
        "81f3c39558d5a1cf2b39dfe3c987264835b9a2d53c85450716f11ff4d0885fc1",
    ),
    "hyperplane/hyperplane2.arff": _File(
        "yoavzelinger/APPETITE",
        "8108f3a9b1cd5899dd752fe37a80819e88717f81",
        "data/hyperplane2.arff", 909_202,
        "72446dc567e579e47646a8f0ff53ce8713b0c37cba7b9c84a9478f6c385af7e6",
    ),
    "hyperplane/hyperplane3.arff": _File(
        "yoavzelinger/APPETITE",
        "8108f3a9b1cd5899dd752fe37a80819e88717f81",
        "data/hyperplane3.arff", 909_078,
        "e1fff1ec7971f1e02c49fb87168d754e926daab9dbbd4f24bc8327df007aed24",
    ),
    "hyperplane/hyperplane4.arff": _File(
        "yoavzelinger/APPETITE",
        "8108f3a9b1cd5899dd752fe37a80819e88717f81",
        "data/hyperplane4.arff", 909_357,
        "c243ab65fb38b9bf24ca2ca9f434c589908b76702d53ae937208a42244effb26",
    ),
    "hyperplane/hyperplane5.arff": _File(
        "yoavzelinger/APPETITE",
        "8108f3a9b1cd5899dd752fe37a80819e88717f81",
        "data/hyperplane5.arff", 909_041,
        "fb696e19b3c95125d964cf9f33b101ece3a0cb3e38c0598f9f0acdd046dc66bc",
    ),
    "hyperplane/hyperplane6.arff": _File(
        "yoavzelinger/APPETITE",
        "8108f3a9b1cd5899dd752fe37a80819e88717f81",
        "data/hyperplane6.arff", 909_157,
        "db1b3c2effd52b7d0b2e6cbb55f429ce41100abcba5cb8c8b091648c433f02cb",
    ),
    "hyperplane/hyperplane7.arff": _File(
        "yoavzelinger/APPETITE",
        "8108f3a9b1cd5899dd752fe37a80819e88717f81",
        "data/hyperplane7.arff", 909_236,
        "14e6817a12a70f4b05c0fd70ceab68623b588b77b53397f96c32cb5e1ebf0ea4",
    ),
    "hyperplane/hyperplane8.arff": _File(
        "yoavzelinger/APPETITE",
        "8108f3a9b1cd5899dd752fe37a80819e88717f81",
        "data/hyperplane8.arff", 909_074,
        "5319cdf5b6c81a29fd89af96d845645238068b854714d096c01e60793888b42e",
    ),
    "hyperplane/hyperplane9.arff": _File(
        "yoavzelinger/APPETITE",
        "8108f3a9b1cd5899dd752fe37a80819e88717f81",
        "data/hyperplane9.arff", 909_122,
        "7cb22b2292c91c4377c65b02c5d83d3e29feeb9400d18aeeff001d09c3395771",
    ),
    "luxembourg/LUdata.csv": _File(
        "ogozuacik/concept-drift-datasets-scikit-multiflow",
        "fcbad97fe3df0e6d31020a6a74e3b456fd3a8377",
        "real-world/LUdata.csv", 279_932,
        "856d5684b4550f8d6c854ef3407b43293c0f8ad9794ec3a04dff675ade6b989f",
    ),
    "powersupply/powersupply.arff": _File(
        "asieriko/REFuzzStream",
        "b52a97a42f7d4ef12f018f38858042274c9f02a2",
        "datasets/powersupply.arff", 397_055,
        "0e2c061f6211c2a25563fe565d7f97c2fceae098e314bf84f95370f01356e7be",
    ),
    "sarcos/sarcos_inv_test.mat": _File(
        "probml/pmtkdata",
        "1f3ffa3d21a38c8e9e5010dcedb71262b35b446a",
        "sarcos_inv_test.mat", 996_776,
        "161a59b5c3b4f4b404584323f181607b2acbe620eb134dc720760dc3f38f5cec",
    ),
    "sea/SEA_training_data.csv": _File(
        "vlosing/driftDatasets",
        "01d08dec716870a36ea793e26e7e896ba921fe5d",
        "artificial/sea/SEA_training_data.csv", 1_049_885,
        "dd2d7d5d08fa9c60ae4cb460f096e15e714cab4fa882b9a359eb24bd095f9f91",
    ),
    "sea/SEA_training_class.csv": _File(
        "vlosing/driftDatasets",
        "01d08dec716870a36ea793e26e7e896ba921fe5d",
        "artificial/sea/SEA_training_class.csv", 100_000,
        "03ee15105c454a4359724109feda3b3117c70115251f30ae4ca43549ef113a40",
    ),
    "souza_nonstationary/1CDT.txt": _File(
        "ATISLabs/SCARGC.jl",
        "84368f3bd275ad86efcbf3f7ba2bd97e1aab2c8d",
        "src/datasets/synthetic/1CDT.txt", 269_375,
        "fc4c1b0c3c113b5755c2c40f76a20d8973cb2ac5557effb19ff2508fb399bbf9",
    ),
    "souza_nonstationary/2CDT.txt": _File(
        "ATISLabs/SCARGC.jl",
        "84368f3bd275ad86efcbf3f7ba2bd97e1aab2c8d",
        "src/datasets/synthetic/2CDT.txt", 253_864,
        "a1bcb438c57f2f05dbf0bf6a45eb214f14469e297aad1a3cc5da11b8a8fb6130",
    ),
    "souza_nonstationary/1CHT.txt": _File(
        "ATISLabs/SCARGC.jl",
        "84368f3bd275ad86efcbf3f7ba2bd97e1aab2c8d",
        "src/datasets/synthetic/1CHT.txt", 266_372,
        "d45be2b78cf3e46245f4878fa05d49e124ee48ff4e3990b2fd0d8f8e78f93507",
    ),
    "souza_nonstationary/2CHT.txt": _File(
        "ATISLabs/SCARGC.jl",
        "84368f3bd275ad86efcbf3f7ba2bd97e1aab2c8d",
        "src/datasets/synthetic/2CHT.txt", 258_479,
        "e76ed887b84b1679164a0c8cabbd8761636d878ba98a73be13d11633bb20d617",
    ),
    "souza_nonstationary/1CSurr.txt": _File(
        "ATISLabs/SCARGC.jl",
        "84368f3bd275ad86efcbf3f7ba2bd97e1aab2c8d",
        "src/datasets/synthetic/1CSurr.txt", 896_093,
        "e8dcbc79d8f220a52ca42de2eeeaade6fa5dcf4ffbe3b5d1ea1d565092d199c5",
    ),
    "souza_nonstationary/UG_2C_2D.txt": _File(
        "ATISLabs/SCARGC.jl",
        "84368f3bd275ad86efcbf3f7ba2bd97e1aab2c8d",
        "src/datasets/synthetic/UG_2C_2D.txt", 1_584_893,
        "3e17e46d85a36f98505e7eb62416f6ff06f5a53463d275af2b8c2ebbca39aff6",
    ),
    "souza_nonstationary/MG_2C_2D.txt": _File(
        "ATISLabs/SCARGC.jl",
        "84368f3bd275ad86efcbf3f7ba2bd97e1aab2c8d",
        "src/datasets/synthetic/MG_2C_2D.txt", 3_166_876,
        "2a4d93a516c4eb0a5eb93266f5d6b253d9cb457dcce35dac255a3a6b898a9630",
    ),
    "souza_nonstationary/GEARS_2C_2D.txt": _File(
        "ATISLabs/SCARGC.jl",
        "84368f3bd275ad86efcbf3f7ba2bd97e1aab2c8d",
        "src/datasets/synthetic/GEARS_2C_2D.txt", 3_727_969,
        "d0cabc8857b6bbc49dcc9f9b6e85aa4665f13b1a958e0d728280d426c28ae7d3",
    ),
    "spam_corpus/spam.zip": _File(
        "vlosing/driftDatasets",
        "01d08dec716870a36ea793e26e7e896ba921fe5d",
        "realWorld/spam.zip", 4_076_932,
        "0c3eb317fcca5495d5768bb9fb57603965b42c36da514bae9d98087c144baf26",
    ),
    "sru/SRU_data.txt": _File(
        "onecoinbuybus/Database_chemoinformatics",
        "1eaa7b94e625f39880bf6903dedfb4cf2070e88b",
        "SRU_data.txt", 1_149_283,
        "6a8f1a632e7618b5aee2a3b50e80bad5af8c5730b17bc40c6072c8033f30a1ef",
    ),
    "usenet1/usenet1.mat": _File(
        "ExaKZ/MatlabDataset",
        "32725f1617a4274f3a92ef0c91d838bf29f074fa",
        "usenet1.mat", 5_792,
        "dacc1f98d4eaccca704904bd2ac8c1459b32080a76fb307a1666ce7ca9e72b98",
    ),
    "usenet2/usenet2.mat": _File(
        "MachineLearningBCAM/AMRC-for-concept-drift-ICML-2022",
        "01867a307c265205845a107312ddff6f2194cf74",
        "usenet2.mat", 13_487,
        "745aa8df36560393362bea3b3dd4d25b7a7440c950d1c63fa5face131dfa7f88",
    ),
    "usps/usps_test.jf": _File(
        "wentropy/DynAE",
        "6d0405bae5d03ff3249b38bbac04caff613c8332",
        "data/usps/usps_test.jf", 1_654_110,
        "f802e6ba3fbc8778cdea6a105311fb4a1a8251eb706b77882bb1966116bf87d2",
    ),
    "w8a/w8a": _File(
        "unc-optimization/AccSPD",
        "d2f1f2c961e3401032649544445bb24ab63ab1c5",
        "data/w8a", 3_478_239,
        "b464b4f6ce6a5d9e181ffc793e19a04751036273722312398ef7673705014902",
    ),
    "weather/NEweather_data.csv": _File(
        "asieriko/REFuzzStream",
        "b52a97a42f7d4ef12f018f38858042274c9f02a2",
        "datasets/NEweather_data.csv", 664_639,
        "e38ef95890ec0df3daee0493e92e59c38ae1c27cd01c4805367f189d52dfeed9",
    ),
    "weather/NEweather_class.csv": _File(
        "asieriko/REFuzzStream",
        "b52a97a42f7d4ef12f018f38858042274c9f02a2",
        "datasets/NEweather_class.csv", 36_318,
        "9c4f62a1d7828b498affb0bd453f7a23aa4f5aa11854537773fef3433a914fa5",
    ),
}
