"""The citation of every dataset in the registry (``citation(name)``), keyed by its ``cite_key``."""

_CIT_KATAKIS_ECAI = (
    'I. Katakis, G. Tsoumakas, I. Vlahavas, "An Ensemble of Classifiers for coping with '
    'Recurring Contexts in Data Streams", ECAI 2008.'
)
_CIT_ZLIOBAITE = (
    'I. Zliobaite, "Combining similarity in time and space for training set formation '
    'under concept drift", Intelligent Data Analysis 15(4):589-611, 2011.'
)
_CIT_SOUZA = (
    'V. M. A. Souza, D. F. Silva, J. Gama, G. E. A. P. A. Batista, "Data Stream '
    "Classification Guided by Clustering on Nonstationary Environments and Extreme "
    'Verification Latency", SIAM SDM 2015, pp. 873-881.'
)
_CIT_PLATT_LIBSVM = (
    'J. Platt, "Fast training of support vector machines using sequential minimal '
    'optimization", 1998. LIBSVM datasets: C.-C. Chang, C.-J. Lin, "LIBSVM: a library '
    'for support vector machines", ACM TIST 2(3), 2011.'
)
_CIT_FORTUNA_BOOK = (
    'L. Fortuna, S. Graziani, A. Rizzo, M. G. Xibilia, "Soft Sensors for Monitoring and '
    'Control of Industrial Processes", Springer, 2007.'
)

_CITATIONS: dict[str, str] = {
    "elec2": (
        'M. Harries, "SPLICE-2 Comparative Evaluation: Electricity Pricing", Technical '
        "Report UNSW-CSE-TR-9905, University of New South Wales, 1999. Normalised version "
        'distributed with MOA: A. Bifet, G. Holmes, R. Kirkby, B. Pfahringer, "MOA: '
        'Massive Online Analysis", JMLR 11:1601-1604, 2010.'
    ),
    "weather": (
        'R. Elwell, R. Polikar, "Incremental Learning of Concept Drift in Nonstationary '
        'Environments", IEEE Trans. Neural Networks 22(10):1517-1531, 2011. Raw data: '
        "NOAA Global Surface Summary of the Day."
    ),
    "powersupply": (
        'X. Zhu, "Stream Data Mining Repository", 2010, http://www.cse.fau.edu/~xqzhu/stream.html.'
    ),
    "sea": (
        'W. N. Street, Y. Kim, "A streaming ensemble algorithm (SEA) for large-scale '
        'classification", KDD 2001.'
    ),
    "hyperplane": (
        'W. Fan, "Systematic data selection to mine concept-drifting data streams", '
        'KDD 2004; G. Hulten, L. Spencer, P. Domingos, "Mining time-changing data '
        'streams", KDD 2001.'
    ),
    "chess": _CIT_ZLIOBAITE,
    "luxembourg": _CIT_ZLIOBAITE,
    "usenet1": _CIT_KATAKIS_ECAI,
    "usenet2": _CIT_KATAKIS_ECAI,
    "spam_corpus": (
        'I. Katakis, G. Tsoumakas, I. Vlahavas, "Tracking recurring contexts using '
        'ensemble classifiers: an application to email filtering", Knowledge and '
        "Information Systems 22(3):371-391, 2010."
    ),
    "souza": _CIT_SOUZA,
    "debutanizer": _CIT_FORTUNA_BOOK,
    "sru": (
        'L. Fortuna, A. Rizzo, M. Sinatra, M. G. Xibilia, "Soft analyzers for a sulfur '
        'recovery unit", Control Engineering Practice 11(12):1491-1500, 2003; and '
        + _CIT_FORTUNA_BOOK
    ),
    "sarcos": (
        "S. Vijayakumar, A. D'Souza, S. Schaal, \"Incremental Online Learning in High "
        'Dimensions", Neural Computation 17(12), 2005; data from C. E. Rasmussen, '
        'C. K. I. Williams, "Gaussian Processes for Machine Learning", MIT Press, 2006.'
    ),
    "air_quality": (
        'S. De Vito, E. Massera, M. Piga, L. Martinotto, G. Di Francia, "On field '
        "calibration of an electronic nose for benzene estimation in an urban pollution "
        'monitoring scenario", Sensors and Actuators B 129(2):750-757, 2008. UCI Machine '
        'Learning Repository, "Air Quality" (CC BY 4.0).'
    ),
    "a9a": (
        _CIT_PLATT_LIBSVM + ' Adult data: R. Kohavi, "Scaling up the accuracy of naive-Bayes '
        'classifiers: a decision-tree hybrid", KDD 1996 (UCI, CC BY 4.0).'
    ),
    "w8a": _CIT_PLATT_LIBSVM,
    "usps": (
        'J. J. Hull, "A database for handwritten text recognition research", IEEE TPAMI '
        "16(5):550-554, 1994."
    ),
}
