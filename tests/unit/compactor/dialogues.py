"""Labelled research dialogues: the calibration set of the local decision model.

Each dialogue is a list of (user, assistant) turns; the last one is the latest turn N, the
others are the earlier discussion. Assistant replies are written the way the compactor sees
research turns: the short findings summary, not the full synthesis.

Labels follow the rubric of the Decisions API probe:

- ``compress``: the earlier turns form a closed, substantive unit and the user has moved to new
  ground (in the latest turn, or already in turn N-1 with turn N following the new topic),
  with no clarification or correction loop going on.
- ``continue``: the user is drilling down into the same point, asking for a clarification or
  correcting the assistant, is mid-way through a multi-part request, or the earlier turns have
  nothing worth summarizing.

``hard`` marks the cases a topic-similarity model alone gets wrong (a near pivot inside one
field, a pivot phrased with drill-down words, a loop about a far-fetched word).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Label = Literal["compress", "continue"]


@dataclass(frozen=True)
class LabelledDialogue:
    name: str
    label: Label
    turns: tuple[tuple[str, str], ...]
    hard: bool = False


def _d(name: str, label: Label, *turns: tuple[str, str], hard: bool = False) -> LabelledDialogue:
    return LabelledDialogue(name=name, label=label, turns=turns, hard=hard)


DIALOGUES: tuple[LabelledDialogue, ...] = (
    # ---------------------------------------------------------------- compress: far pivots
    _d(
        "battery_anodes_to_flow_battery_cost",
        "compress",
        (
            "What causes capacity fade in lithium-ion battery anodes during fast charging?",
            "Fast charging accelerates lithium plating on graphite anodes, thickening the solid "
            "electrolyte interphase and consuming active lithium.",
        ),
        (
            "Do silicon-graphite composite anodes suffer from the same plating issues?",
            "Silicon composites plate less because of their higher working potential, but their "
            "particles pulverize under roughly 300% volume expansion.",
        ),
        (
            "Great, that settles the anode part. What are the current levelized cost of storage "
            "estimates for vanadium redox flow batteries in grid peaking applications?",
            "Stack materials and vanadium electrolyte prices dominate capex; the papers estimate "
            "an LCOS between $0.20 and $0.35 per kWh.",
        ),
    ),
    _d(
        "brms_priors_to_dbscan",
        "compress",
        (
            "Which priors do the brms papers recommend for group-level standard deviations?",
            "Bürkner recommends half-Student-t priors with three degrees of freedom scaled to "
            "the outcome, and warns that flat priors on variances can yield improper posteriors.",
        ),
        (
            "And how should I check whether those priors are too informative?",
            "Run prior predictive checks and compare prior and posterior widths; a posterior "
            "that barely moves from its prior signals that the data carry little information.",
        ),
        (
            "Thanks, that's what I needed for the model section. Separate topic: how do the "
            "clustering papers suggest choosing eps and minPts for DBSCAN?",
            "Ester et al. propose minPts of at least dimension plus one and reading eps off the "
            "knee of the sorted k-distance plot; later work recommends minPts = 2 x dimensions.",
        ),
    ),
    _d(
        "attention_complexity_to_alphafold",
        "compress",
        (
            "Why does self-attention scale quadratically with sequence length?",
            "Every token attends to every other token, so the attention matrix has n^2 entries "
            "and both memory and compute grow quadratically with the sequence length.",
        ),
        (
            "Which papers in my library propose linear-time alternatives?",
            "Linformer projects keys and values to a fixed length, Performer approximates "
            "softmax attention with random features, and Longformer uses sliding windows.",
        ),
        (
            "OK. Moving on to structural biology: how accurate is AlphaFold2 on proteins "
            "without homologous templates?",
            "In CASP14 AlphaFold2 reached a median GDT of about 87 on free-modelling targets, "
            "though accuracy drops for orphan proteins with shallow multiple sequence alignments.",
        ),
    ),
    _d(
        "arctic_amplification_to_soil_carbon",
        "compress",
        (
            "What mechanisms drive Arctic amplification of warming?",
            "Sea-ice albedo feedback, the lapse-rate feedback and increased poleward heat "
            "transport explain most of the amplified Arctic warming in the reviewed studies.",
        ),
        (
            "Which of these dominates in the CMIP6 model analyses?",
            "Pithan and Mauritsen attribute the largest share to the temperature (lapse-rate) "
            "feedback, with surface albedo second.",
        ),
        (
            "For my grant I also need this: how do the papers measure soil organic carbon "
            "changes after cover cropping?",
            "Most studies use paired plots with repeated soil cores to 30 cm, correcting for "
            "bulk density with the equivalent soil mass method; detectable changes need 5+ years.",
        ),
    ),
    _d(
        "heterogeneity_to_gravitational_waves",
        "compress",
        (
            "How should I interpret an I-squared of 75% in a meta-analysis?",
            "An I-squared of 75% means about three quarters of the variability across studies "
            "reflects true heterogeneity rather than sampling error, conventionally 'high'.",
        ),
        (
            "Should I then report a prediction interval as well?",
            "Yes: IntHout et al. recommend prediction intervals with random-effects models, "
            "because the confidence interval of the mean hides how much effects vary.",
        ),
        (
            "Perfect, thank you. Different question: which papers in my library discuss how "
            "LIGO separates gravitational-wave signals from seismic noise?",
            "LIGO uses multi-stage seismic isolation and suspensions, and matched filtering "
            "against waveform templates with coincidence across detectors to reject noise.",
        ),
    ),
    _d(
        "replication_crisis_to_base_editing",
        "compress",
        (
            "What did the Open Science Collaboration find about replicability in psychology?",
            "Only 36% of 100 replications reached significance, and replication effect sizes "
            "were on average half the original ones.",
        ),
        (
            "Which factors predicted successful replication?",
            "Stronger original evidence (smaller p-values) and larger original effects "
            "predicted replication better than the expertise of the replication teams.",
        ),
        (
            "Switching gears entirely: what are the main off-target risks of CRISPR base "
            "editors compared to Cas9 nuclease?",
            "Base editors avoid double-strand breaks but cause guide-independent deamination "
            "of DNA and RNA; cytosine base editors showed genome-wide off-target SNVs in mouse "
            "embryos.",
        ),
    ),
    _d(
        "graphene_to_coral_bleaching",
        "compress",
        (
            "How is large-area graphene grown by chemical vapour deposition on copper?",
            "Methane decomposes on copper foil near 1000 C; the low carbon solubility of "
            "copper makes growth self-limiting to a single layer.",
        ),
        (
            "What limits the quality of the transferred films?",
            "Grain boundaries, wrinkles from thermal mismatch and polymer residues from "
            "PMMA-assisted transfer raise sheet resistance.",
        ),
        (
            "Thanks. Let's turn to marine ecology now: what ocean temperature thresholds "
            "trigger mass coral bleaching?",
            "Bleaching becomes likely above about 4 degree heating weeks and severe beyond 8, "
            "measured as accumulated heat above the maximum monthly mean.",
        ),
    ),
    _d(
        "instrumental_variables_to_dengue_vaccine",
        "compress",
        (
            "When is an instrumental variable valid for causal inference?",
            "It must be relevant to the exposure, affect the outcome only through the "
            "exposure, and share no unmeasured confounders with the outcome.",
        ),
        (
            "How do I test for a weak instrument?",
            "Check the first-stage F statistic; Staiger and Stock's rule of thumb flags "
            "instruments with F below 10.",
        ),
        (
            "Got it, the IV part of my methods is done. Now: what efficacy did the TAK-003 "
            "dengue vaccine show across serotypes?",
            "TAK-003 showed about 80% efficacy against virologically confirmed dengue at 12 "
            "months, high for DENV-2 but lower and uncertain for DENV-3 in seronegatives.",
        ),
    ),
    _d(
        "c4_photosynthesis_to_perovskites",
        "compress",
        (
            "Why is C4 photosynthesis more efficient than C3 in hot climates?",
            "C4 plants concentrate CO2 around Rubisco in bundle-sheath cells, suppressing "
            "photorespiration, which rises steeply with temperature in C3 plants.",
        ),
        (
            "How far along are the efforts to engineer C4 traits into rice?",
            "The C4 Rice Project has introduced several C4 enzymes, but Kranz anatomy and full "
            "CO2 concentration have not yet been achieved.",
        ),
        (
            "Okay, thanks. For my other project: what degrades perovskite solar cells under "
            "humidity and heat?",
            "Water hydrates and decomposes methylammonium lead iodide into PbI2, and heat drives "
            "ion migration; cesium-formamidinium compositions and encapsulation slow it.",
        ),
    ),
    _d(
        "vaccine_hesitancy_to_ocean_acidification",
        "compress",
        (
            "What predicts vaccine hesitancy in the survey studies I saved?",
            "Low trust in health authorities, conspiracy beliefs and perceived low disease risk "
            "are the most consistent predictors across the surveys.",
        ),
        (
            "Are the effects similar across countries?",
            "Trust effects replicate across the 19-country survey, while the role of education "
            "varies and even reverses in some countries.",
        ),
        (
            "Understood. Next topic: how does ocean acidification affect shell formation in "
            "oysters and mussels?",
            "Lower carbonate saturation makes calcification costlier; larval oysters are most "
            "sensitive, with reduced growth and survival below aragonite saturation of 1.5.",
        ),
    ),
    _d(
        "jwst_exoplanets_to_gut_brain",
        "compress",
        (
            "What did JWST detect in the atmosphere of WASP-39b?",
            "JWST detected carbon dioxide, water, sodium and the first sulfur dioxide in an "
            "exoplanet atmosphere, produced by photochemistry.",
        ),
        (
            "How confident are the detections?",
            "The CO2 feature was detected at about 26 sigma, and sulfur dioxide consistently "
            "across several instruments.",
        ),
        (
            "Great, thanks, I'm done with the exoplanet section. What do my papers say about "
            "the gut-brain axis in major depression?",
            "Patients with depression show lower abundance of butyrate producers such as "
            "Faecalibacterium; fecal transfer from patients induces depressive-like behavior "
            "in rats.",
        ),
    ),
    _d(
        "sleep_memory_to_microplastics",
        "compress",
        (
            "How does sleep deprivation affect working memory performance?",
            "Total sleep deprivation impairs working memory with moderate effect sizes, with "
            "attention lapses explaining much of the decline.",
        ),
        (
            "Does recovery sleep restore performance fully?",
            "One night of recovery sleep restores most performance, but chronic restriction "
            "leaves deficits that persist after a single recovery night.",
        ),
        (
            "Alright, on to a separate literature search: how are microplastics quantified in "
            "drinking water samples?",
            "Studies filter samples and identify particles by FTIR or Raman spectroscopy; "
            "counts vary by orders of magnitude with the lower size cut-off.",
        ),
    ),
    # --------------------------------------------------------------- compress: near pivots
    _d(
        "random_forest_importance_to_temperature_scaling",
        "compress",
        (
            "Why is impurity-based variable importance in random forests biased?",
            "It favours continuous and high-cardinality predictors because they offer more "
            "split points; Strobl et al. show the bias with uninformative predictors.",
        ),
        (
            "Is permutation importance the fix?",
            "Permutation importance reduces the bias, though correlated predictors still "
            "share importance; conditional permutation importance addresses that.",
        ),
        (
            "Thanks, that closes the feature-importance part. Now something else: what is "
            "temperature scaling for calibrating neural network classifiers?",
            "Guo et al. fit one temperature parameter on validation logits; it fixes the "
            "overconfidence of modern networks without changing accuracy.",
        ),
        hard=True,
    ),
    _d(
        "cox_assumptions_to_multiple_imputation",
        "compress",
        (
            "How do I check the proportional hazards assumption in a Cox model?",
            "Test scaled Schoenfeld residuals against time with the Grambsch-Therneau test and "
            "inspect log-minus-log survival plots.",
        ),
        (
            "What if it is violated for one covariate?",
            "Stratify by that covariate or add a time-varying coefficient, an interaction of "
            "the covariate with a function of time.",
        ),
        (
            "Fine, the survival model is settled. Next I need the missing-data paragraph: "
            "what do the papers recommend for multiple imputation with chained equations?",
            "Van Buuren recommends including the outcome and auxiliary variables in the "
            "imputation models and at least as many imputations as the percentage of "
            "incomplete cases.",
        ),
        hard=True,
    ),
    _d(
        "pivot_in_previous_turn_then_follow_up",
        "compress",
        (
            "What is the mechanism of action of metformin in type 2 diabetes?",
            "Metformin lowers hepatic glucose production, partly through AMPK activation and "
            "inhibition of mitochondrial glycerophosphate dehydrogenase.",
        ),
        (
            "Does it have cardiovascular benefits?",
            "UKPDS found reduced myocardial infarction in overweight patients on metformin, "
            "though later trials give less certain evidence.",
        ),
        (
            "Let's leave diabetes. How do the ecology papers estimate wolf pack territory size "
            "from GPS collar data?",
            "They use kernel density estimators or minimum convex polygons on collar fixes, "
            "reporting 95% home ranges of 200 to over 1000 square kilometres.",
        ),
        (
            "Which of those methods handles autocorrelated GPS fixes better?",
            "Autocorrelated kernel density estimation accounts for temporal autocorrelation and "
            "avoids the underestimation that conventional KDE shows with frequent fixes.",
        ),
        hard=True,
    ),
    _d(
        "pivot_phrased_as_what_about",
        "compress",
        (
            "How did the Framingham study define hypertension over its cohorts?",
            "Framingham defined hypertension as 140/90 mmHg or treatment, and tracked blood "
            "pressure every two years from 1948.",
        ),
        (
            "And what did it find for the lifetime risk?",
            "Among people normotensive at 55, the residual lifetime risk of hypertension was "
            "about 90%.",
        ),
        (
            "Thanks. What about something completely different: how do honeybees communicate "
            "the location of food through the waggle dance?",
            "The angle of the waggle run relative to vertical encodes the direction relative to "
            "the sun, and its duration encodes distance.",
        ),
        hard=True,
    ),
    _d(
        "glacier_melt_to_bayesian_optimization",
        "compress",
        (
            "How much did Himalayan glaciers lose since 2000 according to the satellite studies?",
            "Geodetic surveys report mass loss of about 0.4 m water equivalent per year, "
            "roughly doubling after 2000 compared with 1975 to 2000.",
        ),
        (
            "What is driving the acceleration?",
            "Rising temperatures explain most of it; black carbon deposition and debris cover "
            "modulate melt regionally.",
        ),
        (
            "How does Bayesian optimization pick the next hyperparameter setting to try?",
            "A Gaussian process models the objective and an acquisition function such as "
            "expected improvement trades off exploration and exploitation.",
        ),
    ),
    _d(
        "three_turn_history_to_new_project",
        "compress",
        (
            "What is the evidence that mindfulness training reduces anxiety?",
            "Meta-analyses find moderate reductions in anxiety versus waitlist, but small or no "
            "differences versus active controls such as exercise.",
        ),
        (
            "How large are the effects against active controls?",
            "Goldberg et al. report standardized differences near 0.1 against evidence-based "
            "active treatments.",
        ),
        (
            "Were the studies at high risk of bias?",
            "Many had small samples and unblinded outcome assessment; preregistered trials "
            "report smaller effects.",
        ),
        (
            "Okay, the mindfulness review is done. Let's start my next chapter: how do "
            "superconducting qubits suffer decoherence?",
            "Two-level system defects in dielectrics, quasiparticles and flux noise limit T1 "
            "and T2; transmons reach coherence times of around 100 microseconds.",
        ),
    ),
    _d(
        "multiple_testing_to_small_area_estimation",
        "compress",
        (
            "When should I prefer the Holm correction over Bonferroni?",
            "Holm's step-down procedure controls the family-wise error rate like Bonferroni "
            "but is uniformly more powerful, so there is little reason to use Bonferroni.",
        ),
        (
            "And is the Benjamini-Hochberg procedure appropriate for my 40 outcomes?",
            "If a proportion of false discoveries is acceptable, Benjamini-Hochberg controls "
            "the false discovery rate and keeps far more power across 40 tests.",
        ),
        (
            "How do Bayesian hierarchical models produce county-level disease rate estimates "
            "when counties have very few cases?",
            "Small area estimation models such as the BYM model borrow strength from "
            "neighbouring counties through spatially structured random effects.",
        ),
        hard=True,
    ),
    # ---------------------------------------------------------- continue: drill-downs
    _d(
        "lme4_optimizer_drill_down",
        "continue",
        (
            "Why does lme4 give convergence warnings for my random-slope model?",
            "Warnings often come from near-singular fits where a variance component is close "
            "to zero, or from poorly scaled predictors.",
        ),
        (
            "How do I tell whether the warning is a false positive?",
            "Refit with other optimizers via allFit; if estimates agree across optimizers, the "
            "warning is usually benign.",
        ),
        (
            "Can you tell me more about the optimizer settings in that paper? Which one did "
            "they use by default?",
            "Bates et al. use BOBYQA for the final fit of linear mixed models, with Nelder-Mead "
            "as an earlier default for generalized models.",
        ),
    ),
    _d(
        "sei_additive_drill_down",
        "continue",
        (
            "What causes capacity fade in lithium-ion battery anodes during fast charging?",
            "Fast charging accelerates lithium plating on graphite anodes, thickening the solid "
            "electrolyte interphase and consuming active lithium.",
        ),
        (
            "Which electrolyte additives reduce that?",
            "Fluoroethylene carbonate and vinylene carbonate form a thinner, more stable SEI "
            "that slows lithium loss.",
        ),
        (
            "More about FEC: how exactly does it change the SEI composition?",
            "FEC decomposes into LiF-rich, cross-linked polymeric layers that are more "
            "elastic and resist cracking during cycling.",
        ),
    ),
    _d(
        "in_that_paper_validation_data",
        "continue",
        (
            "Which deep learning models detect diabetic retinopathy from fundus photos?",
            "Gulshan et al. trained an Inception-v3 network on 128,000 images and reported "
            "sensitivity above 90% for referable retinopathy.",
        ),
        (
            "How did it compare with ophthalmologists?",
            "At the high-specificity operating point it matched the median of the "
            "ophthalmologists who graded the validation sets.",
        ),
        (
            "In that paper, which datasets did they use for validation?",
            "They validated on EyePACS-1 with 9,963 images and Messidor-2 with 1,748 images.",
        ),
    ),
    _d(
        "microbiome_genera_drill_down",
        "continue",
        (
            "How do broad-spectrum antibiotics change the gut microbiome?",
            "They sharply reduce diversity within days; most taxa recover within weeks, but "
            "some remain absent months later.",
        ),
        (
            "Does recovery depend on the antibiotic class?",
            "Clindamycin and fluoroquinolones cause longer-lasting disruption than amoxicillin "
            "in the cohort studies.",
        ),
        (
            "Which specific bacterial genera recovered slowest in that study?",
            "Bifidobacterium and butyrate-producing genera such as Roseburia were still "
            "depleted six months after treatment.",
        ),
    ),
    _d(
        "linear_attention_drill_down",
        "continue",
        (
            "Why does self-attention scale quadratically with sequence length?",
            "Every token attends to every other token, so the attention matrix has n^2 entries "
            "and both memory and compute grow quadratically.",
        ),
        (
            "Which papers propose linear-time alternatives?",
            "Linformer projects keys and values to a fixed length, Performer uses random "
            "features, and Longformer uses sliding windows.",
        ),
        (
            "How much accuracy do Performer's random features lose compared to exact softmax "
            "attention?",
            "On the long-range arena and protein modelling tasks Performer stays within about "
            "one point of exact attention, with larger gaps on tasks needing sharp attention.",
        ),
    ),
    _d(
        "same_analysis_other_cohort",
        "continue",
        (
            "What was the association between air pollution and dementia in the UK Biobank "
            "analysis?",
            "Each 1 microgram per cubic metre higher PM2.5 was associated with a hazard ratio "
            "of about 1.08 for incident dementia.",
        ),
        (
            "Was it adjusted for socioeconomic status?",
            "Yes, models adjusted for deprivation index, education and income, which "
            "attenuated but did not remove the association.",
        ),
        (
            "And what about the same analysis in the Danish registry cohort?",
            "The Danish registry study found a comparable hazard ratio for PM2.5, with stronger "
            "associations for nitrogen dioxide.",
        ),
    ),
    _d(
        "another_question_same_trial",
        "continue",
        (
            "How much did the DASH diet lower blood pressure in the original trial?",
            "The DASH diet lowered systolic blood pressure by 5.5 mmHg and diastolic by 3.0 "
            "mmHg compared with the control diet over eight weeks.",
        ),
        (
            "Was the effect larger in hypertensive participants?",
            "Yes, among participants with hypertension systolic pressure fell by 11.4 mmHg.",
        ),
        (
            "Another question about the same trial: how many participants dropped out?",
            "Of 459 randomized adults, 436 completed the trial; adherence was supported by "
            "providing all meals.",
        ),
        hard=True,
    ),
    # ------------------------------------------------ continue: clarification / correction
    _d(
        "partial_pooling_clarification",
        "continue",
        (
            "Why do hierarchical models give better estimates for small groups?",
            "They partially pool small groups toward the overall mean, trading a little bias "
            "for much lower variance.",
        ),
        (
            "And how much pooling happens for each group?",
            "Pooling depends on the ratio of within-group to between-group variance; groups "
            "with few observations are shrunk more.",
        ),
        (
            "What do you mean by partial pooling? I don't see how that differs from averaging.",
            "Averaging ignores groups entirely; partial pooling estimates each group separately "
            "but pulls noisy estimates toward the grand mean in proportion to their uncertainty.",
        ),
    ),
    _d(
        "wrong_paper_correction",
        "continue",
        (
            "What does Gelman say about the garden of forking paths?",
            "Gelman and Loken argue that data-dependent analysis choices inflate false positives "
            "even without conscious p-hacking.",
        ),
        (
            "Which examples does he give?",
            "The textbook discusses examples from sociology of fertility and voting.",
        ),
        (
            "No, I meant the 2013 paper by Gelman and Loken, not the textbook. Which examples "
            "are in the paper?",
            "The paper discusses the ovulation and clothing colour study and the fat arms and "
            "political attitudes study.",
        ),
    ),
    _d(
        "sample_size_correction",
        "continue",
        (
            "How large was the intervention effect in the school-based exercise trial?",
            "The trial reported an improvement of 0.3 standard deviations in attention scores "
            "among 1,200 children.",
        ),
        (
            "Over what duration?",
            "The intervention ran for one school year with three sessions per week.",
        ),
        (
            "That's wrong, the sample in that study was 120 children, not 1,200. Can you check "
            "again?",
            "You are right: the trial randomized 120 children in six classes; the 1,200 figure "
            "came from the follow-up survey in a different paper.",
        ),
    ),
    _d(
        "still_confused_confidence_interval",
        "continue",
        (
            "Why is the confidence interval in the second meta-analysis so much wider?",
            "It used a random-effects model that adds between-study variance to the standard "
            "error of the pooled effect.",
        ),
        (
            "But both included the same studies, didn't they?",
            "They shared eleven studies; the second added four small trials with divergent "
            "effects, which raised the estimated tau-squared.",
        ),
        (
            "I still don't understand why adding four small trials widens it that much.",
            "Small divergent trials increase the between-study variance estimate, and that "
            "variance is added to every study's weight, so the pooled standard error grows.",
        ),
    ),
    _d(
        "clarify_fixed_random_again",
        "continue",
        (
            "Should school be a fixed or random effect in my model of test scores?",
            "With 40 schools sampled from a larger population and interest in generalizing, a "
            "random intercept for school is appropriate.",
        ),
        (
            "What changes if I only had 5 schools?",
            "With very few groups the variance estimate is unstable; fixed effects or a "
            "Bayesian model with an informative prior are safer.",
        ),
        (
            "Can you clarify the difference between fixed and random effects again, in plain "
            "terms?",
            "Fixed effects estimate a separate intercept per school; random effects treat "
            "school intercepts as draws from a distribution and estimate its variance.",
        ),
    ),
    _d(
        "which_meta_analysis_clarification",
        "continue",
        (
            "How heterogeneous are the meta-analyses of probiotics for preventing "
            "antibiotic-associated diarrhea?",
            "Heterogeneity ranged from moderate to high, with I-squared between 40% and 85% "
            "across the reviews.",
        ),
        (
            "Do they agree on the pooled effect?",
            "Both report a relative risk near 0.6, favouring probiotics.",
        ),
        (
            "Sorry, which of the two meta-analyses reported the I-squared of 85%?",
            "The 2012 JAMA meta-analysis by Hempel et al. reported I-squared of 85%, the "
            "Cochrane review reported 40%.",
        ),
    ),
    # ------------------------------------------------------------ continue: mid-thought
    _d(
        "comparing_three_papers_mid_way",
        "continue",
        (
            "Compare the sample sizes and designs of the three ketamine depression trials in "
            "my library. Start with the first one.",
            "Zarate et al. 2006 was a crossover trial of 18 patients with treatment-resistant "
            "depression, with a response within 24 hours.",
        ),
        (
            "Now the second one.",
            "Murrough et al. 2013 randomized 73 patients to ketamine or midazolam as an active "
            "placebo.",
        ),
        (
            "And the third?",
            "The esketamine trial by Popova et al. 2019 randomized 223 patients to nasal "
            "esketamine plus an antidepressant versus placebo plus an antidepressant.",
        ),
    ),
    _d(
        "stepwise_model_building",
        "continue",
        (
            "I'm building a model of bird counts across sites. Step one: which distribution "
            "should I start with?",
            "Count data with overdispersion usually call for a negative binomial rather than a "
            "Poisson model.",
        ),
        (
            "Step two: many sites have zero birds. What do the papers suggest?",
            "Zero-inflated or hurdle negative binomial models separate structural zeros from "
            "sampling zeros.",
        ),
        (
            "OK, step three for this same model: how do I add the repeated visits per site?",
            "Add a random intercept for site, for example with glmmTMB, which supports "
            "zero-inflated negative binomial mixed models.",
        ),
    ),
    _d(
        "why_only_at_low_temperature",
        "continue",
        (
            "Why do lithium-ion cells lose capacity faster when charged in the cold?",
            "At low temperature lithium diffusion into graphite slows, so lithium plates on the "
            "anode surface instead of intercalating.",
        ),
        (
            "How cold does it need to be?",
            "Plating risk rises sharply below about 10 C at 1C charging, and below 0 C even at "
            "modest rates.",
        ),
        (
            "Why does it happen only then and not at room temperature?",
            "At room temperature intercalation kinetics keep the anode potential above 0 V "
            "versus lithium, so plating is thermodynamically unfavourable.",
        ),
    ),
    # ------------------------------------------------- continue: nothing worth summarizing
    _d(
        "greetings_then_first_question",
        "continue",
        ("Hi there.", "Hello! Ask me anything about the papers in your library."),
        ("What can you do?", "I search your Zotero library and answer with citations."),
        ("Ok.", "Great, go ahead."),
        (
            "What evidence is there that intermittent fasting improves insulin sensitivity?",
            "Small trials report modest improvements in insulin sensitivity, largely explained "
            "by weight loss rather than meal timing itself.",
        ),
        hard=True,
    ),
    _d(
        "thanks_chatter_then_question",
        "continue",
        ("Hello", "Hi! What would you like to look into?"),
        ("Thanks, one sec.", "Sure, take your time."),
        (
            "Which papers discuss the reproducibility of fMRI results?",
            "Botvinik-Nezer et al. found that 70 teams analysing the same fMRI data reached "
            "different conclusions on several hypotheses.",
        ),
        hard=True,
    ),
)
