## Zeichenketten, die der Code (Localization in src/) und das Hauptfenster verwenden.

zocrates-addon-name = Zocrates
zocrates-error-gateway-down = Zocrates läuft nicht: Starten Sie es mit `make run` in Ihrem Zocrates-Ordner und versuchen Sie es dann erneut (unter { $url } hat nichts geantwortet).
zocrates-error-token-missing = Kein Gateway-Token unter { $path }: Starten Sie Zocrates mit `make run` für dieses Zotero-Datenverzeichnis und versuchen Sie es dann erneut.
zocrates-error-unauthorized = Zocrates hat die Anfrage abgelehnt, falsches Token: Das Plugin liest { $path }, das das Gateway beim Start schreibt. Starten Sie Zocrates (`make run`) für dieses Zotero-Datenverzeichnis neu.
zocrates-error-session-busy = Dieser Chat bearbeitet noch eine andere Anfrage. Warten Sie, bis sie abgeschlossen ist (oder stoppen Sie sie), und versuchen Sie es dann erneut.
zocrates-error-checkpoint-pending = Dieser Chat ist an einem Deep-Research-Kontrollpunkt angehalten. Beantworten Sie zuerst die Karte oder verwerfen Sie diese Runde, bevor Sie etwas Neues fragen.
zocrates-error-stale-interrupt = Dieser Kontrollpunkt wurde bereits beantwortet oder verworfen (vielleicht in einem anderen Fenster). Laden Sie den Chat neu, um den aktuellen Stand zu sehen.
zocrates-error-stream-interrupted = Die Verbindung zu Zocrates wurde unterbrochen, bevor die Antwort fertig war. Laden Sie den Chat neu, um zu sehen, was gespeichert wurde.

## Das Hauptfenster: Menü „Ansicht“ und die Leiste, die einen ausgeblendeten Bereich wieder anzeigt.

zocrates-menu-view-pane =
    .label = Zocrates-Bereich
    .accesskey = Z
zocrates-rail-show =
    .title = Zocrates anzeigen
    .aria-label = Zocrates anzeigen
