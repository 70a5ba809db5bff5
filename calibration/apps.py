from django.apps import AppConfig


class CalibrationConfig(AppConfig):
    name = "calibration"
    verbose_name = "Calibration"

    def ready(self) -> None:
        from annotations.signals import assignment_finished

        from .adjudication.notifications import on_assignment_finished

        assignment_finished.connect(on_assignment_finished, dispatch_uid="calibration-adjudication-notice")

        # each kind of evidence.Snapshot that calibration computes or records: its builder and renderers, one
        # per room; a study's snapshots name it by id, so deleting it is refused like a PROTECT
        from evidence.models import Snapshot
        from evidence.registry import kind_register
        from evidence.services import subject_protect

        from .calibrated.snapshots import CALIBRATED_KIND
        from .models import Study
        from .reports.snapshots import CYCLE_REPORT_KIND
        from .studies.snapshots import STUDY_REPORT_KIND
        from .validation.store import BIAS_CHECK_KIND

        for spec in (CYCLE_REPORT_KIND, STUDY_REPORT_KIND, CALIBRATED_KIND, BIAS_CHECK_KIND):
            kind_register(spec)
        subject_protect(kind=Snapshot.Kind.STUDY_REPORT, sender=Study)
